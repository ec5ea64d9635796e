import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built CLI, as npm links the bin. */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `hotpath-load args…`; SIGINT when `interruptWhen` settles; SIGKILL after `timeoutMs`. */
export function cli(
  args: string[],
  options: { interruptWhen?: Promise<void>; timeoutMs?: number } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 90_000);
    options.interruptWhen?.then(() => child.kill('SIGINT'));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
