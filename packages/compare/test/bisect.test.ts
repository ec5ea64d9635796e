import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BisectOptions, type BisectSearch, bisect } from '../src/index.js';
import { makeBisectRepo } from './helpers/bisect-repo.js';
import { runCli } from './helpers/repo.js';

// hotpath bisect on real git histories: each step a real paired comparison through worktrees
// (servers whose handler burns a constant per commit), short windows and big steps so each
// search takes a few comparisons of a few seconds.

const FAST: Omit<BisectOptions, 'good' | 'bad'> = {
  start: 'node server.js',
  url: '/',
  install: 'none',
  duration: 0.5,
  warmup: 0.2,
  connections: 2,
  maxRounds: 8,
  maxTime: 40,
  threshold: 20,
  profiler: 'none',
  memory: 'off',
  // CPU per request: what the servers' step changes, and the least noisy metric on a shared machine
  metrics: ['cpuPerRequest'],
};

const BASE = 200_000;

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'hotpath-bisect-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function repo(name: string, work: number[], unbuildable: number[] = []) {
  const dir = join(root, name);
  mkdirSync(dir);
  return { dir, shas: makeBisectRepo(dir, work, unbuildable) };
}

describe('hotpath bisect', () => {
  it('names the commit of a 3× CPU step among 8 in 3 comparisons: the first to show it sets S, the last is its own', async () => {
    // commits 0..8: 0 is good, the step is at 5, 8 is bad
    const { dir, shas } = repo(
      'step',
      [0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => (i >= 5 ? 3 * BASE : BASE)),
    );
    const lines: string[] = [];
    const result = await bisect({
      ...FAST,
      cwd: dir,
      out: join(dir, 'out'),
      good: shas[0] as string,
      bad: shas[8] as string,
      onStep: (line) => {
        lines.push(line);
      },
    });
    const search = result.search;
    expect(search.conclusion, `${result.text}\n${JSON.stringify(search.steps, null, 1)}`).toBe('culprit');
    expect(search.culprit?.sha).toBe(shas[5]);
    // probes 4 (good: within the threshold), 6 (bad: the step S), 5 (bad by half of S, against
    // its parent 4: the culprit's own comparison)
    expect(search.steps.map((s) => [s.probeIndex, s.goodIndex, s.verdict])).toEqual([
      [4, 0, 'good'],
      [6, 4, 'bad'],
      [5, 4, 'bad'],
    ]);
    expect(search.steps.map((s) => s.setsStep ?? false)).toEqual([false, true, false]);
    expect(search.steps[1]?.change?.change).toBeGreaterThan(1);
    // the culprit's own comparison is placed bad by its side of half the step, or, where that
    // interval has not decided yet at the look that stops it, by the verdict's own regression
    // (a CI run, 2026-12-07: 3× at the first look, regressed before S/2 was cleared)
    const own = search.steps[2];
    expect(own?.decidedBy === 'half-step' || own?.outcome === 'regressed', JSON.stringify(own)).toBe(true);
    expect(search.comparisons).toBe(3);
    const change = search.culprit?.change;
    expect(change?.metric).toBe('cpuPerRequest');
    expect(change?.ci?.[0]).toBeGreaterThan(0.2);
    expect(result.text).toMatch(new RegExp(`^culprit: ${shas[5]?.slice(0, 12)} "work 600000 at 5"`, 'm'));
    expect(lines[0]).toMatch(/^bisect: 8 commits after \w{12}, at most 4 comparisons$/);
    expect(lines[1]).toMatch(
      /^step 1: .* against .*: \w+[ -]?\w* \(within the threshold\), .*at most \d+ left/,
    );
    expect(lines[2]).toMatch(
      /^step 2: .* against .*: regressed \(the step S the rest are placed by\), .*at most \d+ left/,
    );
    expect(lines[3]).toMatch(/^step 3: .* against .*: (\w+ \(bad side of half the step\)|regressed), /);
    // report.json is the whole search; culprit/ the culprit's own comparison
    const written: BisectSearch = JSON.parse(readFileSync(join(dir, 'out', 'report.json'), 'utf8'));
    expect(written.schema).toBe('hotpath-bisect/1');
    expect(written.culprit?.sha).toBe(shas[5]);
    expect(written.steps).toHaveLength(3);
    // report.html draws the search and links the culprit's own report
    const html = readFileSync(result.files.html, 'utf8');
    expect(html).toContain(`culprit ${shas[5]?.slice(0, 12)}`);
    expect(html).toContain('<a href="culprit/report.html">');
    const culpritReport = JSON.parse(readFileSync(join(dir, 'out', 'culprit', 'report.json'), 'utf8'));
    expect(culpritReport.sides.head.sha).toBe(shas[5]);
    expect(culpritReport.sides.base.sha).toBe(shas[4]);
    expect(result.outputs.culprit).toBe(shas[5]);
  }, 120_000);

  it('a range with no step ends "no culprit" when every comparison is within the threshold, and names no commit', async () => {
    // three commits: 1 against 0 shows nothing beyond the threshold, nor 2 against 1
    const { dir, shas } = repo('flat', [BASE, BASE, BASE]);
    const result = await bisect({
      ...FAST,
      cwd: dir,
      out: join(dir, 'out'),
      good: shas[0] as string,
      bad: shas[2] as string,
    });
    expect(result.search.conclusion, result.text).toBe('no-culprit');
    expect(result.search.culprit).toBeNull();
    expect(result.text).toMatch(/^no culprit: /m);
    expect(result.search.steps.map((s) => [s.probeIndex, s.goodIndex, s.verdict])).toEqual([
      [1, 0, 'good'],
      [2, 1, 'good'],
    ]);
    expect(result.search.why).toMatch(/^none of the 2 comparisons along the range/);
  }, 120_000);

  it('a step at --bad with nothing to probe: its own comparison shows it and names it', async () => {
    const { dir, shas } = repo('last', [BASE, 3 * BASE]);
    const result = await bisect({
      ...FAST,
      cwd: dir,
      out: join(dir, 'out'),
      good: shas[0] as string,
      bad: shas[1] as string,
    });
    const search = result.search;
    expect(search.conclusion, result.text).toBe('culprit');
    expect(search.culprit?.sha).toBe(shas[1]);
    expect(search.steps).toMatchObject([
      { probeIndex: 1, goodIndex: 0, verdict: 'bad', culpritCheck: true, setsStep: true },
    ]);
    expect(search.why).toMatch(/the only change in the range/);
  }, 120_000);

  it('skips an unbuildable commit like git bisect skip, names it, and still finds the culprit', async () => {
    // commits 0..6: 3 (the first probe) does not build, the step is at 5
    const { dir, shas } = repo('skip', [BASE, BASE, BASE, BASE, BASE, 3 * BASE, 3 * BASE], [3]);
    const result = await bisect({
      ...FAST,
      build: 'node build.js',
      cwd: dir,
      out: join(dir, 'out'),
      good: shas[0] as string,
      bad: shas[6] as string,
    });
    const search = result.search;
    expect(search.steps[0]).toMatchObject({ probeIndex: 3, outcome: 'unbuildable', verdict: 'skip' });
    expect(search.steps[0]?.reason).toMatch(
      /HP_COMPARE_COMMAND_FAILED: head: build command "node build.js" exited with code 1/,
    );
    expect(search.skipped.map((s) => s.sha)).toEqual([shas[3]]);
    expect(result.text).toMatch(new RegExp(`^skipped \\(unbuildable\\): ${shas[3]?.slice(0, 12)}`, 'm'));
    // the next probe is the open commit nearest the middle (4), then 5 against 4: the step S, and
    // the culprit's own comparison
    expect(search.steps.slice(1).map((s) => [s.probeIndex, s.goodIndex, s.verdict])).toEqual([
      [4, 0, 'good'],
      [5, 4, 'bad'],
    ]);
    expect(search.comparisons).toBe(2);
    expect(search.conclusion, `${result.text}\n${JSON.stringify(search.steps, null, 1)}`).toBe('culprit');
    expect(search.culprit?.sha).toBe(shas[5]);
  }, 120_000);

  it('a bad flag exits 2 with one readable line', async () => {
    const { dir, shas } = repo('flags', [BASE, BASE]);
    const missing = await runCli(['bisect', '--good', shas[0] as string, '--start', 'node server.js'], {
      cwd: dir,
    });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(
      'hotpath: hotpath bisect needs --good REF and --bad REF (commits, tags or branches; see --help)\n',
    );
    const reversed = await runCli(
      [
        'bisect',
        '--good',
        shas[1] as string,
        '--bad',
        shas[0] as string,
        '--start',
        'node server.js',
        '--url',
        '/',
      ],
      { cwd: dir },
    );
    expect(reversed.status).toBe(2);
    expect(reversed.stderr.trim().split('\n')).toHaveLength(1);
    expect(reversed.stderr).toMatch(/HP_COMPARE_BISECT_RANGE: --bad .* is not after --good/);
  }, 30_000);
});
