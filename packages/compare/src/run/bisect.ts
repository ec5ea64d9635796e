// The run layer's bisect: from "bad got slower than good" to the commit that did it. A binary
// search over bad's first-parent history (bisect/search.ts), each step one paired comparison of
// the probe against the current good commit (bisect/step.ts); the first step that shows a change
// sets the step S every later one is placed by (bisect/half-step.ts); the culprit confirmed by its
// own comparison against its first parent, all within a time budget. Returns one result: the search,
// the culprit's report, the files written, the texts rendered once, the outputs and the fail
// decision — the CLI and bisect() only print or return it.

import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { placeStep, stepQuestions } from '../bisect/half-step.js';
import { BISECT_SCHEMA, type BisectSearch, type BisectStep } from '../bisect/model.js';
import { firstParentRange, type RangeCommit } from '../bisect/range.js';
import {
  applyVerdict,
  nextProbe,
  type SearchState,
  startSearch,
  stepsLeft,
  suspects,
} from '../bisect/search.js';
import {
  decidingChange,
  type MeasurementCost,
  measurementFits,
  measureStep,
  mergedMeasurements,
  stepCosts,
  stepShare,
} from '../bisect/step.js';
import { pointFromReport } from '../drift/point.js';
import { gitRoot } from '../measure/checkout.js';
import type { MeasureRuntime } from '../measure/measure.js';
import type { Report } from '../model.js';
import { renderBisectConclusion, renderBisectStep } from '../render/bisect.js';
import { renderBisectHtml } from '../render/bisect-html.js';
import { renderTerminal } from '../render/terminal.js';
import type { FailDecision, WrittenFiles } from '../run-artifacts.js';
import type { Settings } from '../settings/schema.js';
import { failDecision, verdictPolicy } from '../verdict/policy.js';
import { writeClaimed } from './out-dir.js';
import type { RunOutputs } from './outputs.js';
import { writeReport } from './report-files.js';

export interface BisectRunOptions extends Omit<MeasureRuntime, 'refs' | 'autoRounds' | 'shard'> {
  good: string;
  bad: string;
  /**
   * The whole search's budget in seconds (default 1800): a comparison starts only when its setup
   * and the pairs of a first look fit in what is left, and its rounds stop by the budget less its
   * setup (both as the comparisons so far took them: bisect/step.ts measurementFits).
   */
  budget?: number;
  /** Measurements of one step at most: an inconclusive step is measured again up to this (default 2). */
  measurementsPerStep?: number;
  /** Where report.json (the search) and culprit/ (its comparison's report) go; default the settings' out. */
  out?: string;
  /** Each decided step as a line, and the estimate of what is left. */
  onStep?: (line: string) => void;
}

export interface BisectResult {
  search: BisectSearch;
  /** The culprit's own comparison (or the last step's, when the search ended on a range). */
  report?: Report;
  /** The search (report.json), its page (report.html), the culprit's own comparison's files. */
  files: { dir: string; search: string; html: string; culprit?: WrittenFiles };
  removed: string[];
  /** The terminal text of the whole search, rendered once. */
  text: string;
  outputs: RunOutputs;
  failed: FailDecision;
}

const DEFAULT_BUDGET = 1800;

interface Progress {
  commits: RangeCommit[];
  state: SearchState;
  steps: BisectStep[];
  reports: Map<string, Report>;
  /** Index of the good commit the probe that became bad was compared against. */
  badAgainst?: number;
  undecided?: BisectStep;
  budgetSpent?: boolean;
}

type StepKind = 'probe' | 'culprit';
type StepFn = (good: number, probe: number, kind: StepKind) => Promise<BisectStep | undefined>;

const key = (good: number, probe: number) => `${good}:${probe}`;

export async function runBisect(settings: Settings, options: BisectRunOptions): Promise<BisectResult> {
  const { good, bad, budget = DEFAULT_BUDGET, measurementsPerStep = 2, out, onStep, ...runtime } = options;
  const started = Date.now();
  const elapsed = () => (Date.now() - started) / 1000;
  const remaining = () => budget - elapsed();
  const root = await gitRoot(resolve(runtime.baseDir ?? process.cwd(), settings.cwd));
  const commits = await firstParentRange(root, good, bad);
  const p: Progress = { commits, state: startSearch(commits.length), steps: [], reports: new Map() };
  const say = (line: string) => onStep?.(line);
  say(
    `bisect: ${commits.length - 1} commits after ${commits[0]?.sha.slice(0, 12)}, at most ${stepsLeft(p.state)} comparisons`,
  );

  const step = stepper(p, settings, { ...runtime, measurementsPerStep, remaining, say });

  // The search: probes against the current good commit until no candidate is open. Until one
  // shows a change, a probe is good when its comparison shows none beyond the threshold; the
  // first that shows one sets S, and every later probe is placed by which side of S/2 it lies on.
  for (let probe = nextProbe(p.state); probe !== undefined; probe = nextProbe(p.state)) {
    const s = await step(p.state.good, probe, 'probe');
    if (!s) break;
    if (s.verdict === 'undecided') {
      p.undecided = s;
      // Its pairs were cut short by the budget rather than by the step's own noise.
      p.budgetSpent = remaining() < 10;
      break;
    }
    if (s.verdict === 'bad') p.badAgainst = p.state.good;
    p.state = applyVerdict(p.state, probe, s.verdict);
  }
  const search = await conclude(p, step);
  search.seconds = elapsed();
  search.threshold = settings.threshold;
  const culpritReport = search.culprit
    ? p.reports.get(key(p.state.bad - 1, p.state.bad))
    : [...p.reports.values()].at(-1);
  if (search.culprit && culpritReport) {
    search.culprit.scenarios = pointFromReport(culpritReport).scenarios;
  }
  const dir = resolve(out ?? resolve(runtime.baseDir ?? process.cwd(), settings.out));
  return bisectResult(search, culpritReport, dir, settings);
}

/** How the search ends: the culprit confirmed by its own comparison, no culprit, or a range. */
async function conclude(p: Progress, step: StepFn): Promise<BisectSearch> {
  const { commits, state } = p;
  const sha = (i: number) => commits[i]?.sha ?? '';
  const skipped = p.steps
    .filter((s) => s.verdict === 'skip')
    .map((s) => ({ sha: s.probe, subject: commits[s.probeIndex]?.subject ?? '', reason: s.reason ?? '' }));
  const range = (from: number, to: number) => ({
    from: sha(from),
    to: sha(to),
    commits: commits.slice(from + 1, to + 1).map((c) => c.sha),
  });
  const base = {
    schema: BISECT_SCHEMA,
    commits,
    threshold: 0,
    skipped,
    steps: p.steps,
    seconds: 0,
  };
  const done = (fields: Pick<BisectSearch, 'conclusion' | 'culprit' | 'range' | 'why'>): BisectSearch => ({
    ...base,
    ...fields,
    comparisons: p.steps.filter((s) => s.outcome !== 'unbuildable').length,
    pairs: p.steps.reduce((n, s) => n + s.pairs, 0),
  });
  if (p.steps.length === 0 && p.budgetSpent)
    return done({
      conclusion: 'range',
      culprit: null,
      range: range(0, commits.length - 1),
      why: 'the time budget was spent before the first comparison',
    });
  const open = nextProbe(state) !== undefined;
  if (p.undecided || (open && p.budgetSpent)) {
    const why = p.undecided
      ? `step ${p.undecided.step} (${sha(p.undecided.probeIndex).slice(0, 12)} against ${sha(p.undecided.goodIndex).slice(0, 12)}) could not be decided in ${p.undecided.pairs} pairs (${p.undecided.measurements} measurements)${p.budgetSpent ? ' before the time budget ran out (--max-time)' : ': the change there is near the threshold, or the machine too noisy'}`
      : 'the time budget was spent before the search could narrow the range further';
    return done({ conclusion: 'range', culprit: null, range: range(state.good, state.bad), why });
  }
  const last = suspects(state);
  if (last.length > 1)
    return done({
      conclusion: 'range',
      culprit: null,
      range: range(state.good, state.bad),
      why: `${last.length - 1} commit(s) before ${sha(state.bad).slice(0, 12)} could not be built or started (skipped): the culprit is one of them or ${sha(state.bad).slice(0, 12)}`,
    });
  return culpritOrRange(p, step, done, range);
}

/** What a step needs beyond the search's progress: the measuring runtime and the budget's clock. */
type StepRuntime = Omit<BisectRunOptions, 'good' | 'bad' | 'budget' | 'out' | 'onStep'> & {
  measurementsPerStep: number;
  remaining: () => number;
  say: (line: string) => void;
};

/** The first step that showed a change: its change is the step S later steps are placed by. */
const sizedStep = (p: Progress) => p.steps.find((s) => s.setsStep);
const stepSize = (p: Progress) => sizedStep(p)?.change ?? undefined;

/** Measures one step (undefined when the budget ends the search), recording it in `p`. */
function stepper(p: Progress, settings: Settings, options: StepRuntime): StepFn {
  const { measurementsPerStep, remaining, say, ...runtime } = options;
  const { commits } = p;
  const questions = stepQuestions(settings);
  const costs: MeasurementCost[] = [];
  return async (goodIndex: number, probeIndex: number, kind: StepKind): Promise<BisectStep | undefined> => {
    const mean = p.steps.length ? p.steps.reduce((n, s) => n + s.seconds, 0) / p.steps.length : 0;
    // not worth a comparison with less than half a typical one left, nor one whose setup and
    // first look would end past the budget
    if (remaining() < Math.max(5, mean / 2) || !measurementFits(remaining(), stepCosts(costs))) {
      p.budgetSpent = true;
      return undefined;
    }
    const goodSha = commits[goodIndex]?.sha ?? '';
    const probeSha = commits[probeIndex]?.sha ?? '';
    const size = stepSize(p);
    const measured = await measureStep(
      settings,
      goodSha,
      probeSha,
      { ...runtime, remaining, measurements: measurementsPerStep, costs },
      size ? questions.probe(size) : questions.sizing,
    );
    const base = {
      step: p.steps.length + 1,
      good: goodSha,
      probe: probeSha,
      goodIndex,
      probeIndex,
      culpritCheck: kind === 'culprit',
    };
    const s: BisectStep =
      measured.state === 'unbuildable'
        ? {
            ...base,
            outcome: 'unbuildable',
            verdict: 'skip',
            pairs: 0,
            measurements: 1,
            change: null,
            seconds: measured.seconds,
            reason: measured.reason,
          }
        : {
            ...base,
            outcome: measured.report.outcome,
            ...placeStep(
              mergedMeasurements(measured.shards.map((x) => x.measurements)),
              measured.report.outcome,
              settings.scenarios,
              questions.policy,
              stepShare(measured.shards),
              size,
            ),
            pairs: Math.min(...measured.report.scenarios.map((sc) => sc.pairs)),
            measurements: measured.shards.length,
            seconds: measured.seconds,
          };
    if (s.change === null && measured.state === 'measured') s.change = decidingChange(measured.report);
    if (!size && s.verdict === 'bad' && s.change) s.setsStep = true;
    if (measured.state === 'measured') p.reports.set(key(goodIndex, probeIndex), measured.report);
    p.steps.push(s);
    // What is left once this step's verdict is applied, at the mean time of the steps so far.
    const after =
      s.verdict !== 'undecided' && kind === 'probe'
        ? applyVerdict(p.state, probeIndex, s.verdict)
        : undefined;
    const left = after ? stepsLeft(after) : 0;
    const measuredSteps = p.steps.filter((x) => x.outcome !== 'unbuildable');
    const meanNow = measuredSteps.reduce((n, x) => n + x.seconds, 0) / Math.max(1, measuredSteps.length);
    say(renderBisectStep(s, commits, left, meanNow));
    return s;
  };
}

/** The search's files (report.json, the culprit's own report), text, outputs and fail decision. */
function bisectResult(
  search: BisectSearch,
  culpritReport: Report | undefined,
  dir: string,
  settings: Settings,
): BisectResult {
  const { written, removed } = writeClaimed(dir, (claimed) => {
    const searchFile = join(claimed, 'report.json');
    writeFileSync(searchFile, `${JSON.stringify(search, null, 2)}\n`);
    const culprit =
      search.culprit && culpritReport ? writeReport(join(claimed, 'culprit'), culpritReport) : undefined;
    const html = join(claimed, 'report.html');
    writeFileSync(html, renderBisectHtml(search, culprit ? 'culprit/report.html' : undefined));
    return { dir: claimed, search: searchFile, html, ...(culprit ? { culprit } : {}) };
  });
  const text = `${renderBisectConclusion(search)}${search.culprit && culpritReport ? `\nThe culprit's own comparison:\n${renderTerminal(culpritReport)}` : ''}`;
  const outcome =
    search.conclusion === 'culprit'
      ? 'regressed'
      : search.conclusion === 'no-culprit'
        ? 'unchanged'
        : 'inconclusive';
  return {
    search,
    ...(culpritReport ? { report: culpritReport } : {}),
    files: written,
    removed,
    text,
    outputs: {
      'bisect-conclusion': search.conclusion,
      culprit: search.culprit?.sha ?? '',
      report: written.search,
    },
    failed: failDecision(verdictPolicy(settings), outcome),
  };
}

type Done = (fields: Pick<BisectSearch, 'conclusion' | 'culprit' | 'range' | 'why'>) => BisectSearch;
type RangeOf = (from: number, to: number) => BisectSearch['range'];

/** The last suspect left: confirmed as the culprit by its own comparison, or a range and why. */
async function culpritOrRange(p: Progress, step: StepFn, done: Done, range: RangeOf): Promise<BisectSearch> {
  const { commits, state } = p;
  const sha = (i: number) => commits[i]?.sha ?? '';
  // The culprit's own comparison: against its first parent (the good commit next to it).
  let own = p.steps.find(
    (s) => s.goodIndex === state.bad - 1 && s.probeIndex === state.bad && s.verdict !== 'skip',
  );
  if (!own) {
    own = await step(state.bad - 1, state.bad, 'culprit');
    if (!own)
      return done({
        conclusion: 'range',
        culprit: null,
        range: range(state.good, state.bad),
        why: `the time budget was spent before the culprit's own comparison (${sha(state.bad).slice(0, 12)} against its parent)`,
      });
  }
  if (own.verdict === 'bad') {
    const commit = commits[state.bad] as RangeCommit;
    const by =
      own.decidedBy === 'half-step'
        ? `above half the step S that step ${sizedStep(p)?.step ?? '?'} showed`
        : own.setsStep
          ? `${own.outcome}: the only change in the range, every step before it within the threshold`
          : own.outcome;
    return done({
      conclusion: 'culprit',
      culprit: { ...commit, change: own.change, pairs: own.pairs, scenarios: [] },
      range: range(state.bad - 1, state.bad),
      why: `${commit.sha.slice(0, 12)} against its parent ${sha(state.bad - 1).slice(0, 12)}: ${by}`,
    });
  }
  if (own.verdict === 'undecided')
    return done({
      conclusion: 'range',
      culprit: null,
      range: range(state.bad - 1, state.bad),
      why: `the culprit's own comparison (${sha(state.bad).slice(0, 12)} against its parent) could not be decided in ${own.pairs} pairs: it is the likeliest commit, not a certain one`,
    });
  if (!sizedStep(p))
    return done({
      conclusion: 'no-culprit',
      culprit: null,
      range: range(0, commits.length - 1),
      why: `none of the ${p.steps.filter((s) => s.verdict === 'good').length} comparisons along the range, each a commit against the one before it in the search, showed a change beyond the threshold (small changes may still add up over the range)`,
    });
  return done({
    conclusion: 'range',
    culprit: null,
    range: range(p.badAgainst ?? 0, state.bad),
    why: `${sha(state.bad).slice(0, 12)} shows the step against ${sha(p.badAgainst ?? 0).slice(0, 12)} but not against its own parent: the change builds up over several commits`,
  });
}
