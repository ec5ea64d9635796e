// Bisect bench (not a CI test): does `hotpath bisect` name the commit of a CPU step placed at
// random in a linear history, in how many comparisons and how long, and does it name none when
// there is no step?
//
//   node bench/bisect.mjs [--runs 10] [--commits 32] [--step 15] [--none] [--budget 600]
//                         [--duration S] [--seed N] [--save FILE] [--second PCT] [--at N]
//
// Each run: a temp git repository of `--commits` commits after the good one (0); every commit
// edits a comment, except the one at a random index in 1..commits where the handler's CPU work
// grows by `--step` percent (`--none`: no step). bisect() at the defaults (rounds: auto,
// sequential stop; `--duration` to shorten the windows) from commit 0 (good) to the last (bad),
// with `--budget` seconds for the whole search. Scored: the culprit named and right, a wrong
// commit named as certain (never acceptable), or a range (honest, not a hit); comparisons, pairs
// and seconds per search. The servers are pinned to core 0 when taskset exists.
//
// --second PCT: a second step of PCT percent at another random commit (two apart at least). The
// search names one of them (or a range); then, as a user would, each side of the named commit is
// bisected again — [good, culprit − 1] and [culprit, bad] — and the run is scored on whether both
// steps were named.
// --at N: the step at commit N in every run (N = commits, the last, is the longest search: every
// probe before it shows no change).
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bisect } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    commits: { type: 'string', default: '32' },
    step: { type: 'string', default: '15' },
    none: { type: 'boolean', default: false },
    budget: { type: 'string', default: '600' },
    duration: { type: 'string' },
    seed: { type: 'string' },
    save: { type: 'string' },
    second: { type: 'string' },
    at: { type: 'string' },
  },
});
const second = values.second === undefined ? undefined : Number(values.second) / 100;
const runs = Number(values.runs);
const commits = Number(values.commits);
const step = Number(values.step) / 100;
let seed = Number(values.seed ?? Date.now() % 2 ** 31);
const random = () => {
  // mulberry32: a seeded draw, so a run can be repeated
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const WORK = 200_000;
const hasTaskset = spawnSync('taskset', ['-V']).status === 0;

function makeRepo(dir, at, atSecond) {
  const git = (...args) =>
    execFileSync('git', args, {
      cwd: dir,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'b',
        GIT_AUTHOR_EMAIL: 'b@e',
        GIT_COMMITTER_NAME: 'b',
        GIT_COMMITTER_EMAIL: 'b@e',
      },
    }).trim();
  git('init', '-q', '-b', 'main');
  const shas = [];
  for (let i = 0; i <= commits; i++) {
    const work = Math.round(
      WORK *
        (at !== undefined && i >= at ? 1 + step : 1) *
        (atSecond !== undefined && i >= atSecond ? 1 + second : 1),
    );
    writeFileSync(
      join(dir, 'server.cjs'),
      `// revision ${i}\nconst http = require('node:http');\nfunction handle(res) {\n  let x = 0;\n  for (let i = 0; i < ${work}; i++) x += Math.sqrt(i) * 1e-9;\n  res.end(String(x));\n}\nhttp.createServer((_req, res) => handle(res)).listen(Number(process.env.PORT), '127.0.0.1');\n`,
    );
    git('add', '.');
    git(
      'commit',
      '-q',
      '-m',
      i === at
        ? `the step (+${values.step} %)`
        : i === atSecond
          ? `the second step (+${values.second} %)`
          : `comment ${i}`,
    );
    shas.push(git('rev-parse', 'HEAD'));
  }
  return shas;
}

const tally = { right: 0, wrong: 0, range: 0, none: 0 };
for (let run = 1; run <= runs; run++) {
  // drawn whatever --at says, so that a seed places every later draw as it would without it
  const drawn = 1 + Math.floor(random() * commits);
  const at = values.none ? undefined : values.at !== undefined ? Number(values.at) : drawn;
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-bench-bisect-'));
  const load = loadavg()[0];
  try {
    let atSecond;
    if (second !== undefined)
      do atSecond = 1 + Math.floor(random() * commits);
      while (Math.abs(atSecond - at) < 2);
    const shas = makeRepo(dir, at, atSecond);
    const started = Date.now();
    const search = (good, bad) =>
      bisect({
        start: `${hasTaskset ? 'taskset -c 0 ' : ''}node server.cjs`,
        url: '/',
        install: 'none',
        cwd: dir,
        out: join(dir, 'out'),
        ...(values.duration ? { duration: Number(values.duration) } : {}),
        good,
        bad,
        budget: Number(values.budget),
        onStep: (line) => process.stderr.write(`  ${line}\n`),
      });
    const result = await search(shas[0], shas[commits]);
    const s = result.search;
    const named = s.culprit?.sha;
    const kind =
      s.conclusion === 'culprit'
        ? named === shas[at ?? -1]
          ? 'right'
          : 'wrong'
        : s.conclusion === 'no-culprit'
          ? 'none'
          : 'range';
    tally[kind]++;
    const line = {
      run,
      step: at ?? null,
      conclusion: s.conclusion,
      kind,
      named: named ? shas.indexOf(named) : null,
      range: s.conclusion === 'range' ? s.range.commits.map((c) => shas.indexOf(c)) : undefined,
      comparisons: s.comparisons,
      pairs: s.pairs,
      seconds: Math.round((Date.now() - started) / 1000),
      load: Number(load.toFixed(2)),
      change: s.culprit?.change
        ? `${(s.culprit.change.change * 100).toFixed(1)} % [${s.culprit.change.ci?.map((x) => (x * 100).toFixed(1)).join(', ')}]`
        : undefined,
      why: s.conclusion === 'culprit' ? undefined : s.why,
    };
    if (atSecond !== undefined) {
      line.second = atSecond;
      const first = named ? shas.indexOf(named) : -1;
      // each side of the named commit, as a user would bisect next
      const sides =
        first > 0
          ? [
              [0, first - 1],
              [first, commits],
            ].filter(([g, b]) => b > g)
          : [];
      line.again = [];
      for (const [g, b] of sides) {
        const again = (await search(shas[g], shas[b])).search;
        line.again.push({
          range: [g, b],
          conclusion: again.conclusion,
          named: again.culprit ? shas.indexOf(again.culprit.sha) : null,
          comparisons: again.comparisons,
        });
      }
      const found = new Set([first, ...line.again.map((a) => a.named)].filter((x) => x !== null && x >= 0));
      line.both = found.has(at) && found.has(atSecond);
      line.seconds = Math.round((Date.now() - started) / 1000);
    }
    console.log(JSON.stringify(line));
    if (values.save) appendFileSync(values.save, `${JSON.stringify(line)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  `bisect bench: ${runs} runs, ${commits} commits, ${values.none ? 'no step' : `a +${values.step} % step`}: right ${tally.right}, wrong (named as certain) ${tally.wrong}, range ${tally.range}, no culprit ${tally.none}`,
);
