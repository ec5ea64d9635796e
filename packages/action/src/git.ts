import { execFile, spawn } from 'node:child_process';
import { HotpathActionError } from './errors.js';

/** The commit the workspace has checked out. */
export function gitHead(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', ['rev-parse', 'HEAD'], { cwd: dir }, (err, stdout, stderr) => {
      if (err)
        reject(
          new HotpathActionError(
            'HP_ACTION_GIT',
            `git rev-parse HEAD failed in ${dir}: ${stderr.trim() || err.message}`,
          ),
        );
      else resolve(stdout.trim());
    });
  });
}

/** Runs a command through /bin/sh; resolves with its exit code and last output line. */
export function runCommand(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; tail: string }> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('error', () => {});
    child.on('close', (code) => {
      clearTimeout(timer);
      const lines = output.trim().split('\n');
      resolve({ code: code ?? 1, tail: lines[lines.length - 1] ?? '' });
    });
  });
}
