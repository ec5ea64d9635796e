import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linksIn } from '../../compare/test/helpers/gfm.js';
import { makeRepo, runAction } from './helpers/action-run.js';
import { defined } from './helpers/defined.js';
import { type FakeGitHub, startFakeGitHub } from './helpers/fake-github.js';

// The pull request names its hottest function with markup, a mention, a newline, a workflow
// command, autolink triggers and a right-to-left override, in a file whose name closes a markdown
// link and starts an autolink (issue #28). An object-literal method with a string key carries that
// name into the profile.
const NAME =
  'evil\n@octocat ![x](https://example.com/p.png) <img src=x onerror=alert(1)> # h ::set-output name=x::y _www.evil.example/login #123 \u202egnp.exe';
const HOT_FILE = 'src/x)(www.evil.example/login.js';
const HOT_MODULE = `exports.hot = {
  ${JSON.stringify(NAME)}(n) { let x = 0; for (let i = 0; i < n; i++) x += Math.sqrt(i); return x; },
};
`;
const hostile = (extra: number) => `const { hot } = require(${JSON.stringify(`./${HOT_FILE}`)});
console.log('::set-output name=pwned::from-server-output');
console.log('::warning::injected by the server');
require('node:http').createServer((req, res) => res.end(String(hot[Object.keys(hot)[0]](${extra})))).listen(Number(process.env.PORT), '127.0.0.1');
`;

/** Text outside inline code spans, without backslash-escaped characters: what markdown would render as markup. */
const outsideCode = (line: string) => line.replace(/(`+)[^`]*?\1/g, '').replace(/\\./g, '');

describe('hostile text from the pull request is harmless', () => {
  let root: string;
  let github: FakeGitHub;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'hotpath-hostile-'));
    github = await startFakeGitHub();
  });
  afterAll(async () => {
    await github.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('renders a markup-laden function name as text and lets no server output issue a workflow command', async () => {
    const repo = makeRepo(
      root,
      { 'server.js': hostile(20_000), [HOT_FILE]: HOT_MODULE },
      { 'server.js': hostile(200_000) },
    );
    const run = await runAction({
      repo,
      apiUrl: github.url,
      inputs: {
        start: 'node server.js',
        duration: '0.8',
        warmup: '0.2',
        rounds: '2',
        connections: '2',
        'upload-artifact': 'false',
      },
    });
    expect(run.stdout.match(/::error::.*/)?.[0], run.stdout).toBeUndefined();
    expect(github.comments).toHaveLength(1);
    const body = defined(github.comments[0], 'the comment').body;
    expect(body).toContain('evil');
    for (const line of body.split('\n')) {
      const text = outsideCode(line);
      expect(text, line).not.toMatch(/<img/i);
      expect(text, line).not.toMatch(/!\[x\]/);
      expect(text, line).not.toMatch(/\]\(https:\/\/example\.com/);
      expect(text, line).not.toMatch(/@octocat/);
      expect(text, line).not.toMatch(/::set-output/);
    }
    expect(body.split('\n').some((l) => /^#+ h\b/.test(l))).toBe(false);
    // The hot function links to its file, the name percent-encoded so that the link ends where
    // hotpath ends it; no other link (fake-github renders every comment, runAction every summary).
    expect(linksIn(body)).toContain(
      `https://github.example/o/r/blob/${repo.headSha}/src/x%29%28www.evil.example/login.js#L2`,
    );
    expect(github.unsafe).toEqual([]);
    // Outside hotpath's own stop-commands windows, the only workflow commands are hotpath's.
    let stopped: string | undefined;
    for (const line of run.stdout.split('\n')) {
      if (stopped) {
        if (line === `::${stopped}::`) stopped = undefined;
        continue;
      }
      const stop = /^::stop-commands::(\S+)$/.exec(line);
      if (stop) {
        stopped = stop[1];
        continue;
      }
      if (line.startsWith('::'))
        expect(line, 'a workflow command not from hotpath').toMatch(
          /^::(group|endgroup|warning|debug|error)::(hotpath|$)/,
        );
    }
    expect(
      readFileSync(join(defined(run.outputs.report, 'the report output'), '..', 'report.json'), 'utf8'),
    ).toContain('evil');
    expect(run.outputs.pwned).toBeUndefined();
    expect(run.outputs.x).toBeUndefined();
  });
});
