const MAX_TOOL_OUTPUT = 512 * 1024 * 1024;

export interface ToolResult {
  stdout: Buffer;
  error?: string;
  missing?: boolean;
}

/** Runs a tool without a shell; the path is one argument after `--`, never parsed as an option. */
export async function runTool(
  command: string,
  args: string[],
  timeoutMs: number,
  input?: Buffer,
): Promise<ToolResult> {
  // Loaded here, not at start-up: a run whose symbols and names all come from the ELF files
  // and the cache starts no tool, and node:child_process costs milliseconds to load.
  const { spawn } = await import('node:child_process');
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, args, {
        shell: false,
        stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
        timeout: timeoutMs,
      });
    } catch (error) {
      resolve({ stdout: Buffer.alloc(0), error: (error as Error).message, missing: true });
      return;
    }
    // stdin is a pipe when there is input; stdout and stderr always are
    if (input && child.stdin) {
      child.stdin.on('error', () => undefined); // the tool may exit before reading everything
      child.stdin.end(input);
    }
    const chunks: Buffer[] = [];
    let bytes = 0;
    let stderr = '';
    let tooBig = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_TOOL_OUTPUT) {
        tooBig = true;
        child.kill('SIGKILL');
        return;
      }
      chunks.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      resolve({
        stdout: Buffer.alloc(0),
        error: `${command}: ${error.message}`,
        missing: error.code === 'ENOENT',
      });
    });
    child.on('close', (code, signal) => {
      const stdout = Buffer.concat(chunks);
      if (tooBig) resolve({ stdout, error: `${command} printed more than ${MAX_TOOL_OUTPUT} bytes; cut` });
      else if (signal)
        resolve({ stdout, error: `${command} stopped by ${signal} (time limit ${timeoutMs} ms?)` });
      else if (code !== 0)
        resolve({ stdout, error: `${command} exited with ${code}: ${stderr.trim().split('\n')[0]}` });
      else resolve({ stdout });
    });
  });
}
