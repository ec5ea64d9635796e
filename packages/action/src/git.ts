import { execFile } from 'node:child_process';
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
