import { spawn } from 'node:child_process';

/** The desktop's "open this file" command on each platform. */
export function openerFor(platform: NodeJS.Platform, file: string): { command: string; args: string[] } {
  if (platform === 'darwin') return { command: 'open', args: [file] };
  // `start` is a cmd built-in; its first quoted argument is the window title.
  if (platform === 'win32') return { command: 'cmd', args: ['/d', '/c', 'start', '""', file] };
  return { command: 'xdg-open', args: [file] };
}

export type OpenResult = { opened: true; command: string } | { opened: false; reason: string };

/**
 * Hands `file` to the desktop's opener (xdg-open, open, start) and does not wait for it. Never
 * throws: without an opener (a server, a container, CI) it says so and the run goes on.
 */
export function openFile(file: string, platform: NodeJS.Platform = process.platform): Promise<OpenResult> {
  const { command, args } = openerFor(platform, file);
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, args, { detached: true, stdio: 'ignore', windowsHide: true });
    } catch (err) {
      resolve({ opened: false, reason: `${command} could not start: ${(err as Error).message}` });
      return;
    }
    child.once('error', (err: NodeJS.ErrnoException) =>
      resolve({
        opened: false,
        reason: err.code === 'ENOENT' ? `no ${command} on this machine` : `${command} failed: ${err.message}`,
      }),
    );
    child.once('spawn', () => {
      child.unref();
      resolve({ opened: true, command });
    });
  });
}
