// Drift bench (not a CI test): does the drift mode find a staircase of small regressions, and
// stay quiet on a branch that changes nothing?
//
//   node bench/drift.mjs [--runs N] [--commits 12] [--aa] [--rounds N] [--duration S] [--save FILE]
//   node bench/drift.mjs --simulate [--runs 1000] [--half 3] [--intervals HISTORY.json] [--pairs 12]
//   node bench/drift.mjs --bootstrap DIR [--runs 200]      (resamples the real runs kept in DIR)
//   node bench/drift.mjs --replay HISTORY.json [--aa]
//   node bench/drift.mjs --runs N [--aa] --record DIR      (keeps every run's history in DIR)
//   node bench/drift.mjs --score DIR                       (scores every history kept in DIR)
//
// Real mode: a temp git repository whose first commit is tagged v1.0.0 (the reference), then
// `--commits` commits; with the staircase (default) the handler costs 3 % more CPU (of the
// reference's cost) at commits 1, 4, 7 and 10 — four steps, 12 % in all; with --aa every commit
// changes a comment only. After every commit a full drift run (measureDrift at the default
// settings unless overridden, one shard) appends its point to a history file; the series is
// analysed after every run as the Action does, and the drift issue "appears" at the first commit
// where issueAction says create. Scored from the final history: a step counts as named when a
// change point's commit range contains it and spans at most three commits.
//
// --replay: a recorded history (e.g. one --save wrote) analysed after each of its points, as the
// Action would have after each run — with the analysis of this build.
//
// --record DIR: each real run's history is kept as DIR/<staircase|aa>-<date>-<n>.json, and a line
// per run (start, end, load average before and after, seconds per drift run) is appended to
// DIR/runs.jsonl, so that runs made on different days add up to the ten of each kind the goal
// asks for. --score DIR replays every kept history with this build's analysis and prints the
// same summary as a real run, per kind.
//
// --simulate: the same staircase (and an A/A series) drawn many times from normal noise with
// per-point standard errors either from a recorded history's intervals (--intervals) or from
// interval half-widths around --half percent (0.7–1.3 × it), at the level a default run's
// interval has (Bonferroni over 5 tests, --pairs round pairs, 12 by default as a run at today's
// defaults has); each run's reported standard error is itself estimated from its pairs (drawn as
// the true one × sqrt(chi²ₖ / k), k = pairs − 1).
//
// --bootstrap DIR: staircases and A/A series resampled from the kept real runs in DIR: each
// simulated run draws 12 of their points with all verdict metrics together (their correlation
// and tails as measured), less the staircase's level times each metric's pooled response, and
// adds the level back; analysed and scored as real runs are. The servers are pinned to core 0 and the
// load generator to core 1 when taskset exists (real mode).
import { execFileSync, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { appendPoint, emptyHistory, historyText, parseHistory } from '../dist/drift/history.js';
import { analysisValue } from '../dist/drift/point.js';
import { resolveSettings } from '../dist/index.js';
import { analyseSeries, currentSeries, issueAction, measureDrift } from '../dist/internal.js';
import { tQuantile } from '../dist/verdict/statistics.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    commits: { type: 'string', default: '12' },
    aa: { type: 'boolean', default: false },
    simulate: { type: 'boolean', default: false },
    replay: { type: 'string' },
    half: { type: 'string', default: '3' },
    intervals: { type: 'string' },
    work: { type: 'string', default: '400000' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '4' },
    metric: { type: 'string', default: 'cpuPerRequest' },
    save: { type: 'string' },
    record: { type: 'string' },
    score: { type: 'string' },
    bootstrap: { type: 'string' },
    pairs: { type: 'string', default: '12' },
    pinned: { type: 'boolean', default: false },
  },
});

const STEPS = [1, 4, 7, 10];
const STEP = 0.03;
const commits = Number(values.commits);
const levelAt = (c, aa) => (aa ? 0 : STEP * STEPS.filter((s) => c >= s).length);

/** Steps (commit numbers) named by the trend's change points: range contains it, at most 3 commits wide. */
function namedSteps(trend, shas) {
  const indexOf = (sha) => shas.indexOf(sha); // 0 = the reference
  return STEPS.filter((s) => s <= commits).filter((s) =>
    trend.steps.some((step) => {
      const after = indexOf(step.after);
      const upTo = indexOf(step.upTo);
      return after >= 0 && upTo >= 0 && after < s && s <= upTo && upTo - after <= 3;
    }),
  );
}

function summarise(label, results, aa) {
  const n = results.length;
  const count = (f) => results.filter(f).length;
  const raised = `issue raised: ${count((r) => r.issueAt !== undefined)}/${n}`;
  if (aa) {
    console.log(
      `${label}: ${n} runs; ${raised}; runs with a change point: ${count((r) => r.spurious > 0)}/${n}; change points in all: ${results.reduce((s, r) => s + r.spurious, 0)}`,
    );
    return;
  }
  console.log(
    `${label}: ${n} runs; >= 3 of 4 steps named: ${count((r) => r.named >= 3)}/${n}; mean steps named ${(results.reduce((s, r) => s + r.named, 0) / n).toFixed(2)}; ${raised}; issue before the drift passed the threshold: ${count((r) => r.issueAt !== undefined && r.issueAt < 4)}/${n}; change points that name no step: ${results.reduce((s, r) => s + r.spurious, 0)}`,
  );
}

/**
 * How each in-verdict metric answered the CPU staircase, pooled over runs: the slope of its
 * measured change on the true CPU drift (least squares through zero; 1 = moves as CPU per
 * request does), or, for A/A runs, its mean change. A slope above 1 passes the threshold before
 * the CPU drift does: an issue it opens before commit 4 is early by the CPU's measure only.
 */
function printResponses(kind, results) {
  const by = new Map();
  for (const r of results.flatMap((x) => x.responses)) {
    const list = by.get(r.metric) ?? [];
    list.push(r);
    by.set(r.metric, list);
  }
  const parts = [...by].map(([metric, list]) => {
    if (kind === 'aa')
      return `${metric} ${((list.reduce((a, r) => a + r.change, 0) / list.length) * 100).toFixed(2)} %`;
    const sxy = list.reduce((a, r) => a + r.level * r.change, 0);
    const sxx = list.reduce((a, r) => a + r.level * r.level, 0);
    return `${metric} ${sxx > 0 ? (sxy / sxx).toFixed(2) : 'n/a'}×`;
  });
  console.log(
    kind === 'aa'
      ? `  mean change of each verdict metric over the A/A points: ${parts.join(', ')}`
      : `  each verdict metric's change per unit of true CPU drift, pooled: ${parts.join(', ')}`,
  );
}

/** The drift issue as the Action keeps it across runs: open or not, and the run that first opened it. */
function issueTracker() {
  const state = { open: false, issueAt: undefined, openedBy: [] };
  return {
    state,
    /** The action for the analysis after run `n`, applied to the state. */
    after(n, analysis) {
      const action = issueAction(analysis, state.open);
      if (action === 'create' && state.issueAt === undefined) {
        state.issueAt = n;
        state.openedBy = analysis.exceeded.map((t) => t.metric);
      }
      if (action === 'create' || action === 'update') state.open = true;
      if (action === 'close') state.open = false;
      return action;
    },
  };
}

/** Replays a kept history as the Action would have analysed it after each of its points. */
function replayHistory(file, aa, print) {
  const history = parseHistory(readFileSync(file, 'utf8'), file);
  const series = currentSeries(history);
  if (!series) throw new Error(`${file} holds no points`);
  const shas = [series.reference.sha, ...series.points.map((p) => p.commit)];
  const issue = issueTracker();
  for (let n = 1; n <= series.points.length; n++) {
    const analysis = analyseSeries({ ...series, points: series.points.slice(0, n) });
    const action = issue.after(n, analysis);
    if (!print) continue;
    const trend = analysis.trends.find((t) => t.metric === values.metric);
    const m = series.points[n - 1]?.scenarios[0]?.metrics.find((x) => x.metric === values.metric);
    console.log(
      `commit ${n} (true drift ${(levelAt(n, aa) * 100).toFixed(0)} %): ${values.metric} ${m ? `${(m.change * 100).toFixed(1)} % [${(m.ci[0] * 100).toFixed(1)}, ${(m.ci[1] * 100).toFixed(1)}]` : 'n/a'}; level now ${trend?.current ? `${(trend.current.change * 100).toFixed(1)} % [${(trend.current.ci[0] * 100).toFixed(1)}, ${(trend.current.ci[1] * 100).toFixed(1)}]` : 'n/a'}; steps ${trend?.steps.map((s) => `${shas.indexOf(s.after)}..${shas.indexOf(s.upTo)}`).join(' ') || 'none'}; exceeded: ${analysis.exceeded.map((t) => t.metric).join(', ') || 'none'}; issue ${action}`,
    );
  }
  const trend = analyseSeries(series).trends.find((t) => t.metric === values.metric);
  const named = aa || !trend ? 0 : namedSteps(trend, shas).length;
  // Each in-verdict metric's measured change per point, against the true CPU drift there.
  const responses = series.points.flatMap((point, i) =>
    (point.scenarios[0]?.metrics ?? [])
      .filter((m) => m.inVerdict)
      .map((m) => ({ metric: m.metric, level: levelAt(i + 1, aa), change: m.change })),
  );
  return {
    named,
    issueAt: issue.state.issueAt,
    openedBy: issue.state.openedBy,
    spurious: Math.max(0, (trend?.steps.length ?? 0) - named),
    points: series.points.length,
    responses,
  };
}

if (values.replay) {
  summarise(
    `replayed ${values.aa ? 'A/A ' : ''}${values.replay}`,
    [replayHistory(values.replay, values.aa, true)],
    values.aa,
  );
  process.exit(0);
}

if (values.score) {
  const files = readdirSync(values.score)
    .filter((f) => /^(staircase|aa)-.*\.json$/.test(f))
    .sort();
  for (const kind of ['staircase', 'aa']) {
    const results = [];
    for (const f of files.filter((name) => name.startsWith(`${kind}-`))) {
      const r = replayHistory(join(values.score, f), kind === 'aa', false);
      if (r.points < commits) {
        console.log(`${f}: ${r.points} of ${commits} points (interrupted, or still running), left out`);
        continue;
      }
      console.log(
        `${f}: steps named ${r.named}, issue at commit ${r.issueAt === undefined ? 'never' : `${r.issueAt} (by ${r.openedBy.join(', ')})`}, other change points ${r.spurious}`,
      );
      results.push(r);
    }
    if (results.length) {
      summarise(
        `kept ${kind === 'aa' ? 'A/A' : 'staircase'} runs in ${values.score}`,
        results,
        kind === 'aa',
      );
      printResponses(kind, results);
    }
  }
  process.exit(0);
}

/** A seeded uniform generator (an LCG): synthetic runs are the same on every machine. */
function uniform(seed) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/**
 * Synthetic runs of 12 commits, staircase then A/A: `metricsAt(commit, aa, run)` gives a drift
 * run's metrics; each series is analysed after every run as the Action does, and scored as a
 * real run is. Returns the results per kind.
 */
function syntheticRuns(runs, metricsAt, analysisOptions = {}) {
  const byKind = {};
  for (const aa of [false, true]) {
    const results = [];
    for (let r = 0; r < runs; r++) {
      const reference = { ref: 'v1.0.0', sha: '0'.repeat(40) };
      const shas = [reference.sha];
      let history = emptyHistory();
      const issue = issueTracker();
      for (let c = 1; c <= commits; c++) {
        const sha = c.toString(16).padStart(40, 'a');
        shas.push(sha);
        const point = {
          id: `synthetic-${r}-${c}`,
          commit: sha,
          date: new Date(Date.UTC(2026, 0, 1, 0, c)).toISOString(),
          threshold: 5,
          scenarios: [{ name: 'default', metrics: metricsAt(c, aa, r), functions: [] }],
        };
        history = appendPoint(history, reference, point);
        issue.after(c, analyseSeries(currentSeries(history), analysisOptions));
      }
      const trend = analyseSeries(currentSeries(history), analysisOptions).trends.find(
        (t) => t.metric === values.metric,
      );
      const named = aa || !trend ? 0 : namedSteps(trend, shas).length;
      results.push({
        named,
        issueAt: issue.state.issueAt,
        openedBy: issue.state.openedBy,
        spurious: Math.max(0, (trend?.steps.length ?? 0) - named),
      });
    }
    byKind[aa ? 'aa' : 'staircase'] = results;
  }
  return byKind;
}

if (values.bootstrap) {
  // Resampled series: every kept run's points, each with all its verdict metrics together (so the
  // metrics keep the correlation and tails they had on this machine), less the staircase's true
  // level times each metric's pooled response; a simulated run draws 12 of them and adds the
  // level back. The analysis and the issue logic are this build's.
  const files = readdirSync(values.bootstrap)
    .filter((f) => /^(staircase|aa)-.*\.json$/.test(f))
    .sort();
  const kept = [];
  for (const f of files) {
    const series = currentSeries(parseHistory(readFileSync(join(values.bootstrap, f), 'utf8'), f));
    if (series && series.points.length >= commits) kept.push({ aa: f.startsWith('aa-'), series });
  }
  const slope = new Map();
  const sums = new Map();
  for (const { aa, series } of kept) {
    if (aa) continue;
    series.points.forEach((point, i) => {
      const x = Math.log1p(levelAt(i + 1, false));
      for (const m of point.scenarios[0]?.metrics ?? []) {
        const sum = sums.get(m.metric) ?? { xy: 0, xx: 0 };
        sum.xy += x * analysisValue(m.metric, m.change);
        sum.xx += x * x;
        sums.set(m.metric, sum);
      }
    });
  }
  for (const [metric, sum] of sums) slope.set(metric, sum.xx > 0 ? sum.xy / sum.xx : 0);
  const residuals = kept.flatMap(({ aa, series }) =>
    series.points.map((point, i) => ({
      metrics: (point.scenarios[0]?.metrics ?? []).map((m) => {
        const x = aa ? 0 : Math.log1p(levelAt(i + 1, false));
        const value = analysisValue(m.metric, m.change);
        return {
          ...m,
          residual: value - (slope.get(m.metric) ?? 0) * x,
          lo: value - analysisValue(m.metric, m.ci[0]),
          hi: analysisValue(m.metric, m.ci[1]) - value,
        };
      }),
    })),
  );
  if (residuals.length === 0) throw new Error(`no complete history in ${values.bootstrap}`);
  console.log(
    `resampling ${residuals.length} points of ${kept.length} kept runs; responses to the staircase: ${[...slope].map(([m, b]) => `${m} ${b.toFixed(2)}×`).join(', ')}`,
  );
  const random = uniform(777);
  const fromValue = (metric, v) => (analysisValue(metric, 0.5) === 0.5 ? v : Math.expm1(v));
  const runs = Number(values.runs ?? 200);
  const byKind = syntheticRuns(runs, (c, aa) => {
    const drawn = residuals[Math.floor(random() * residuals.length)];
    const x = Math.log1p(levelAt(c, aa));
    return drawn.metrics.map(({ residual, lo, hi, ...m }) => {
      const value = (slope.get(m.metric) ?? 0) * x + residual;
      return {
        ...m,
        change: fromValue(m.metric, value),
        ci: [fromValue(m.metric, value - lo), fromValue(m.metric, value + hi)],
      };
    });
  });
  for (const aa of [false, true]) {
    const results = byKind[aa ? 'aa' : 'staircase'];
    summarise(`resampled ${aa ? 'A/A' : 'staircase'} (${runs} runs)`, results, aa);
    const at = new Map();
    for (const r of results) at.set(r.issueAt ?? 'never', (at.get(r.issueAt ?? 'never') ?? 0) + 1);
    const by = new Map();
    for (const r of results) for (const m of r.openedBy) by.set(m, (by.get(m) ?? 0) + 1);
    console.log(
      `  issue opened at commit: ${[...at]
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]), 'en', { numeric: true }))
        .map(([k, n]) => `${k}: ${n}`)
        .join(', ')}; opened by: ${[...by].map(([m, n]) => `${m} ${n}`).join(', ') || 'none'}`,
    );
  }
  process.exit(0);
}

if (values.simulate) {
  // Per-point standard errors on the log scale, as a default run's interval implies them.
  const pairs = Number(values.pairs);
  const df = pairs - 1;
  const t = tQuantile(1 - 0.01 / 2, df);
  let recorded;
  if (values.intervals) {
    const history = parseHistory(readFileSync(values.intervals, 'utf8'), values.intervals);
    recorded = (currentSeries(history)?.points ?? []).flatMap((p) =>
      p.scenarios.flatMap((s) => s.metrics.filter((m) => m.metric === values.metric).map((m) => m.se)),
    );
    if (recorded.length === 0) throw new Error(`${values.intervals} has no ${values.metric} points`);
  }
  const random = uniform(12345);
  const gauss = () => {
    let u = 0;
    while (u === 0) u = random();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
  };
  const seOf = () =>
    recorded
      ? (recorded[Math.floor(random() * recorded.length)] ?? 0.01)
      : (Number(values.half) / 100 / t) * (0.7 + 0.6 * random());
  const byKind = syntheticRuns(
    Number(values.runs ?? 1000),
    (c, aa) => {
      const trueSe = seOf();
      const value = Math.log1p(levelAt(c, aa)) + gauss() * trueSe;
      // What a run reports: its standard error estimated from its pairs (df = pairs − 1).
      let chi = 0;
      for (let k = 0; k < df; k++) chi += gauss() ** 2;
      const se = trueSe * Math.sqrt(chi / df);
      const half = se * t;
      return [
        {
          metric: 'cpuPerRequest',
          better: 'lower',
          change: Math.expm1(value),
          ci: [Math.expm1(value - half), Math.expm1(value + half)],
          se,
          pairs,
          inVerdict: true,
        },
      ];
    },
    { simulations: 500 },
  );
  for (const aa of [false, true])
    summarise(
      `simulated ${aa ? 'A/A' : 'staircase'} (${recorded ? `se from ${values.intervals}` : `half-widths ~${values.half} %`})`,
      byKind[aa ? 'aa' : 'staircase'],
      aa,
    );
  process.exit(0);
}

// ── real mode ─────────────────────────────────────────────────────────────────────────────
const hasTaskset = spawnSync('taskset', ['-V']).status === 0;
if (hasTaskset && !values.pinned) {
  const r = spawnSync(
    'taskset',
    ['-c', '1', process.execPath, fileURLToPath(import.meta.url), ...process.argv.slice(2), '--pinned'],
    { stdio: 'inherit' },
  );
  process.exit(r.status ?? 1);
}

const server = (work, note) => `// each request burns ${work} iterations of CPU${note}
const work = ${work};
require('node:http').createServer((req, res) => {
  let x = 0;
  for (let i = 0; i < work; i++) x += Math.sqrt(i) * 1e-9;
  res.end(String(x));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

const runs = Number(values.runs ?? 1);
const results = [];
for (let r = 0; r < runs; r++) {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-drift-bench-'));
  const git = (...args) =>
    execFileSync('git', args, {
      cwd: dir,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'b',
        GIT_AUTHOR_EMAIL: 'b@example.com',
        GIT_COMMITTER_NAME: 'b',
        GIT_COMMITTER_EMAIL: 'b@example.com',
      },
    }).trim();
  const base = Number(values.work);
  const write = (c) => {
    const work = Math.round(base * (1 + levelAt(c, values.aa)));
    writeFileSync(join(dir, 'server.cjs'), server(work, values.aa ? `\n// commit ${c}` : ''));
    git('add', '.');
    git('commit', '-q', '--allow-empty', '-m', `commit ${c}`);
    return git('rev-parse', 'HEAD');
  };
  git('init', '-q', '-b', 'main');
  const shas = [write(0)];
  git('tag', 'v1.0.0');
  const kind = values.aa ? 'aa' : 'staircase';
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  if (values.record) mkdirSync(values.record, { recursive: true });
  const historyFile = values.record
    ? join(values.record, `${kind}-${stamp}-${r + 1}.json`)
    : (values.save ?? join(dir, '..', `${dir.split('/').pop()}-history.json`));
  const runStarted = new Date();
  const loadBefore = loadavg()[0];
  const seconds = [];
  let history = emptyHistory();
  const issue = issueTracker();
  try {
    for (let c = 1; c <= commits; c++) {
      shas.push(write(c));
      const settings = resolveSettings({
        config: {
          start: `${hasTaskset ? 'taskset -c 0 ' : ''}node server.cjs`,
          connections: Number(values.connections),
          ...(values.rounds ? { rounds: Number(values.rounds) } : {}),
          ...(values.duration ? { duration: Number(values.duration) } : {}),
          ...(values.warmup ? { warmup: Number(values.warmup) } : {}),
          out: join(dir, '..', 'hotpath-drift-bench-report'),
        },
        configName: 'drift bench',
      });
      const started = Date.now();
      const run = await measureDrift(settings, 'tag:v*', { baseDir: dir });
      history = appendPoint(history, run.reference, run.point);
      writeFileSync(historyFile, historyText(history));
      const analysis = analyseSeries(currentSeries(history));
      const action = issue.after(c, analysis);
      const m = run.point.scenarios[0]?.metrics.find((x) => x.metric === values.metric);
      const trend = analysis.trends.find((t) => t.metric === values.metric);
      const took = Math.round((Date.now() - started) / 1000);
      seconds.push(took);
      console.log(
        `run ${r + 1} commit ${c} (true drift ${(levelAt(c, values.aa) * 100).toFixed(0)} %): ${values.metric} ${m ? `${(m.change * 100).toFixed(1)} % [${(m.ci[0] * 100).toFixed(1)}, ${(m.ci[1] * 100).toFixed(1)}]` : 'n/a'}; level now ${trend?.current ? `${(trend.current.change * 100).toFixed(1)} %` : 'n/a'}; steps ${trend?.steps.map((s) => `${shas.indexOf(s.after)}..${shas.indexOf(s.upTo)}`).join(' ') || 'none'}; issue ${action}; ${took} s`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const analysis = analyseSeries(currentSeries(history));
  const trend = analysis.trends.find((t) => t.metric === values.metric);
  const named = values.aa || !trend ? 0 : namedSteps(trend, shas).length;
  results.push({
    named,
    issueAt: issue.state.issueAt,
    spurious: Math.max(0, (trend?.steps.length ?? 0) - named),
  });
  if (values.record) {
    const line = {
      history: historyFile.split('/').pop(),
      kind,
      started: runStarted.toISOString(),
      finished: new Date().toISOString(),
      loadBefore: Number(loadBefore.toFixed(2)),
      loadAfter: Number(loadavg()[0].toFixed(2)),
      secondsPerDriftRun: seconds,
      node: process.version,
    };
    appendFileSync(join(values.record, 'runs.jsonl'), `${JSON.stringify(line)}\n`);
  }
  console.log(
    `run ${r + 1}: steps named ${named}, issue at commit ${issue.state.issueAt ?? 'never'}; history in ${historyFile}`,
  );
}
summarise(`real ${values.aa ? 'A/A' : 'staircase'}`, results, values.aa);
