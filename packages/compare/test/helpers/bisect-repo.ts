import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A linear history for bisect tests: one commit per entry of `work`, each a node:http server
 * whose handler burns `work[i]` square roots per request (a comment-only change when the work
 * stays the same); `unbuildable` commits carry a build.js that exits 1 (0 elsewhere).
 * Returns the shas, oldest first (the first is --good).
 */
export function makeBisectRepo(
  dir: string,
  work: readonly number[],
  unbuildable: readonly number[] = [],
): string[] {
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@example.com',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@example.com',
      },
    }).trim();
  git('init', '-q', '-b', 'main');
  const shas: string[] = [];
  work.forEach((n, i) => {
    writeFileSync(
      join(dir, 'server.js'),
      `// revision ${i}
const http = require('node:http');
function burnSquareRoots(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x += Math.sqrt(i);
  return x;
}
http.createServer((req, res) => res.end(String(burnSquareRoots(${n})))).listen(Number(process.env.PORT), '127.0.0.1');
`,
    );
    writeFileSync(join(dir, 'build.js'), `process.exit(${unbuildable.includes(i) ? 1 : 0});\n`);
    git('add', '.');
    git('commit', '-q', '-m', n === work[i - 1] || i === 0 ? `comment ${i}` : `work ${n} at ${i}`);
    shas.push(git('rev-parse', 'HEAD'));
  });
  return shas;
}
