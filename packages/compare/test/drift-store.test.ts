import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parseHistory } from '../src/drift/history.js';
import { appendToHistoryBranch, readHistoryBranch } from '../src/drift/store.js';
import { point, v140 } from './helpers/history.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e',
    },
  }).trim();

/** A bare repository as the remote and `n` clones of it (each a writer's workspace). */
function remoteWithClones(n: number): { remote: string; clones: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'hotpath-history-'));
  dirs.push(root);
  const remote = join(root, 'remote.git');
  git(root, 'init', '-q', '--bare', '-b', 'main', remote);
  const seed = join(root, 'seed');
  git(root, 'clone', '-q', remote, seed);
  writeFileSync(join(seed, 'server.js'), '// app\n');
  git(seed, 'add', '.');
  git(seed, 'commit', '-q', '-m', 'app');
  git(seed, 'push', '-q', 'origin', 'HEAD:main');
  const clones = Array.from({ length: n }, (_, i) => {
    const dir = join(root, `clone-${i}`);
    git(root, 'clone', '-q', remote, dir);
    return dir;
  });
  return { remote, clones };
}

const remoteHistory = (remote: string) =>
  parseHistory(git(remote, 'show', 'hotpath-history:history.json'), 'remote history');
const ids = (remote: string) =>
  remoteHistory(remote)
    .series.flatMap((s) => s.points.map((p) => p.id))
    .sort();

describe('the history branch', () => {
  it('is created by the first writer and read back; the default branch is untouched', async () => {
    const { remote, clones } = remoteWithClones(1);
    const [clone = ''] = clones;
    const mainBefore = git(remote, 'rev-parse', 'main');
    expect((await readHistoryBranch({ repo: clone })).series).toEqual([]);
    const result = await appendToHistoryBranch({ repo: clone }, v140, point(1));
    expect(result.attempts).toBe(1);
    expect(ids(remote)).toEqual(['p1']);
    expect((await readHistoryBranch({ repo: clone })).series[0]?.points[0]?.id).toBe('p1');
    expect(git(remote, 'rev-parse', 'main')).toBe(mainBefore);
    expect(git(clone, 'status', '--porcelain')).toBe('');
  });

  it('survives a lost race: the loser re-reads, merges and pushes again; no point lost or doubled', async () => {
    const { remote, clones } = remoteWithClones(2);
    const [a = '', b = ''] = clones;
    await appendToHistoryBranch({ repo: a }, v140, point(1));
    // Writer A reads the branch, then — before A pushes — writer B appends and pushes.
    const result = await appendToHistoryBranch(
      {
        repo: a,
        beforePush: async (attempt) => {
          if (attempt === 1) await appendToHistoryBranch({ repo: b }, v140, point(3));
        },
      },
      v140,
      point(2),
    );
    expect(result.attempts).toBe(2);
    expect(ids(remote)).toEqual(['p1', 'p2', 'p3']);
    // and the branch is a line of commits, none forced away
    expect(git(remote, 'rev-list', '--count', 'hotpath-history')).toBe('3');
  });

  it('keeps every point when several writers push at the same time', async () => {
    const { remote, clones } = remoteWithClones(4);
    await Promise.all(
      clones.map((repo, i) => appendToHistoryBranch({ repo, attempts: 10 }, v140, point(10 + i))),
    );
    expect(ids(remote)).toEqual(['p10', 'p11', 'p12', 'p13']);
  });

  it('gives up with HP_COMPARE_HISTORY after its attempts when the push keeps failing', async () => {
    const { clones } = remoteWithClones(1);
    const [clone = ''] = clones;
    await expect(
      appendToHistoryBranch(
        { repo: clone, remote: join(tmpdir(), 'no-such-remote.git'), attempts: 2 },
        v140,
        point(1),
      ),
    ).rejects.toMatchObject({ code: 'HP_COMPARE_HISTORY' });
  });

  it('refuses a history branch name that is not a plain branch name', async () => {
    const { clones } = remoteWithClones(1);
    await expect(
      appendToHistoryBranch({ repo: clones[0] ?? '', branch: '--upload-pack=x' }, v140, point(1)),
    ).rejects.toMatchObject({ code: 'HP_COMPARE_INVALID_SETTING' });
  });

  it('survives a writer killed in the middle: the branch stays readable, and the next point lands', async () => {
    const { remote, clones } = remoteWithClones(2);
    const [a = '', b = ''] = clones;
    await appendToHistoryBranch({ repo: a }, v140, point(1));
    // A writer in its own process, appending point after point, killed at some moment.
    const script = fileURLToPath(new URL('./helpers/history-writer.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, b], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => {
      let lines = 0;
      child.stdout.on('data', (chunk: Buffer) => {
        lines += String(chunk).split('\n').filter(Boolean).length;
        if (lines >= 2) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', () => resolve());
    });
    await new Promise((resolve) => child.on('exit', resolve));
    const before = ids(remote);
    expect(before).toContain('p1');
    expect(new Set(before).size).toBe(before.length);
    await appendToHistoryBranch({ repo: a }, v140, point(99));
    const after = ids(remote);
    expect(after).toEqual([...before, 'p99'].sort());
  });
});
