import type {
  HotFunctionDiff,
  LoadLevel,
  MetricVerdict,
  Outcome,
  Placement,
  RateLevel,
  Report,
  ScenarioReport,
} from '../model.js';
import { CAPACITY_PRECISION, CAPACITY_START, describeSlo, parseSlo, STEP_SECONDS } from '../settings/slo.js';
import { displayName, formatChange, formatDetectable } from './format.js';
import { metricLabel } from './metric-labels.js';

/** The outcome as a headline word. */
export const OUTCOME_WORD: Record<Outcome, string> = {
  regressed: 'Regression',
  improved: 'Improvement',
  'not-worse': 'No regression',
  unchanged: 'Unchanged',
  inconclusive: 'Inconclusive',
};

/**
 * The one-line verdict of a scenario, in hotpath's words (names from the PR as they are):
 * regressed and improved name the metrics; unchanged says within what margin and how small a
 * change the run could see; inconclusive says that the run could not tell, and why.
 */
export function scenarioSummary(
  s: Pick<ScenarioReport, 'metrics' | 'hotFunctions' | 'functionsRegressed' | 'outcome'>,
  threshold: number,
): string {
  const hot = hotterText(s.hotFunctions);
  const decided = s.metrics.filter((m) => m.inVerdict);
  const pick = (o: Outcome) => decided.filter((m) => m.outcome === o);
  switch (s.outcome) {
    case 'regressed': {
      const regressed = pick('regressed');
      if (regressed.length > 0) return `Regression: ${changes(regressed)}${hot}`;
      return `Regression: hotter functions: ${hotNames(s.hotFunctions).join(', ')}`;
    }
    case 'improved':
      return `Improvement: ${changes(pick('improved'))}${hot}`;
    case 'unchanged':
      return `Unchanged: every verdict metric within ±${threshold} % (this run could see ${seen(decided)})${hot}`;
    case 'not-worse':
      return `No regression beyond ${threshold} % (this run could see ${seen(decided)})${hot}`;
    default: {
      const open = pick('inconclusive');
      return `Inconclusive: this run could not tell whether ${open.map((m) => metricLabel(m.metric)).join(', ')} changed by ${threshold} % (it could see ${seen(open)})${hot}`;
    }
  }
}

/** The metrics part of a scenario's verdict (no function names): safe to show as plain text. */
export function metricsSummary(s: Pick<ScenarioReport, 'metrics' | 'outcome'>, threshold: number): string {
  return scenarioSummary({ metrics: s.metrics, outcome: s.outcome, functionsRegressed: false }, threshold);
}

/** The one-line verdict of the run over its scenarios. */
export function runSummary(report: Pick<Report, 'scenarios' | 'outcome' | 'settings'>): string {
  const { scenarios } = report;
  const threshold = report.settings.threshold;
  const [only] = scenarios;
  if (only && scenarios.length === 1) return scenarioSummary(only, threshold);
  const names = (o: Outcome) =>
    scenarios
      .filter((s) => s.outcome === o)
      .map((s) => s.name)
      .join(', ');
  const count = (o: Outcome) => scenarios.filter((s) => s.outcome === o).length;
  const n = scenarios.length;
  if (report.outcome === 'unchanged') return `Unchanged: within ±${threshold} % in ${n} scenarios`;
  if (report.outcome === 'not-worse') return `No regression beyond ${threshold} % in ${n} scenarios`;
  return `${OUTCOME_WORD[report.outcome]} in ${count(report.outcome)} of ${n} scenarios: ${names(report.outcome)}`;
}

/** "±2.1 % in Requests/s, ±0.8 % in CPU per request" for the metrics given. */
function seen(ms: readonly MetricVerdict[]): string {
  const parts = ms.map((m) => `${formatDetectable(m)} in ${metricLabel(m.metric)}`);
  return parts.length > 0 ? parts.join(', ') : 'nothing: no verdict metric';
}

const hotNames = (hot: HotFunctionDiff | undefined) => (hot?.flagged ?? []).slice(0, 3).map(displayName);

function hotterText(hot: HotFunctionDiff | undefined): string {
  const names = hotNames(hot);
  return names.length ? `; hotter: ${names.join(', ')}` : '';
}

const changes = (ms: readonly MetricVerdict[]) =>
  ms.map((m) => `${metricLabel(m.metric)} ${formatChange(m, m.change)}`).join(', ');

/** How many rounds ran and why they stopped (rounds: auto), per shard when they differ. */
export function roundsWords(report: Pick<Report, 'stop' | 'rounds' | 'settings'>): string {
  const one = (stop: Report['stop'][number]) => {
    if (stop.rounds === 'fixed') return 'a fixed count';
    const last = stop.looks.at(-1);
    const pairs = last ? `${last.pairs} ${last.pairs === 1 ? 'pair' : 'pairs'}` : 'no look';
    const why =
      stop.reason === 'conclusive'
        ? 'the answer was clear'
        : stop.reason === 'max-time'
          ? `the time budget (${report.settings.maxTime} s) was spent`
          : `max-rounds (${report.settings.maxRounds}) was reached`;
    return `auto: ${pairs}, stopped because ${why} (${stop.looks.length} ${stop.looks.length === 1 ? 'look' : 'looks'}, alpha spending)`;
  };
  const texts = [...new Set(report.stop.map(one))];
  return texts.length === 1
    ? (texts[0] ?? '')
    : report.stop.map((s, i) => `shard ${i + 1}: ${one(s)}`).join('; ');
}

const cpuList = (cpus: readonly number[]) => `CPU${cpus.length > 1 ? 's' : ''} ${cpus.join(', ')}`;

/** Where the processes ran ("servers on CPU 0, the load generator on CPU 1"), or that nothing was placed. */
export function placementText(placement: Placement | undefined): string {
  if (!placement) return 'none (the scheduler placed the servers and the load generator)';
  const where = `servers on ${cpuList(placement.server)}, the load generator (hotpath) on ${cpuList(placement.load)}`;
  const w = placement.widened;
  if (!w) return where;
  const when = w.at === 'load-level' ? 'in the load-level search' : 'in round 1';
  const again = w.at === 'load-level' ? 'the search ran again' : 'round 1 was measured again';
  return `${where} (widened from ${cpuList(w.from)}: ${w.side}'s threads and processes beyond its event loop did ${Math.round(w.share * 100)} % of its CPU ${when}, which one CPU would serialise; ${again})`;
}

/** How a round loads the two sides: side by side in slices, or one server at a time. */
export function interleaveText(slice: number | undefined, order: readonly ('base' | 'head')[]): string {
  if (slice && slice > 0)
    return `both servers up in each round, the load alternating between them every ${slice} s, or 10× a scenario's mean latency where that is longer (B H, H B, …)`;
  return `one server at a time, interleaved (${order.map((o) => (o === 'base' ? 'B' : 'H')).join(' ')})`;
}

/**
 * A scenario's load: its connections (for connections: auto, how they were chosen) and, at a
 * fixed rate, the rate (for a share of base's capacity, the capacity it was taken of).
 */
export function loadLevelText(
  scenario: {
    name: string;
    connections: number | 'auto';
    rate?: number | string;
    slo?: string;
    http2?: boolean;
    grpc?: boolean;
  },
  levels: readonly LoadLevel[] | undefined,
  rates?: readonly RateLevel[],
): string {
  const level = levels?.find((l) => l.scenario === scenario.name);
  const count = `${scenario.connections} ${scenario.grpc ? 'gRPC ' : scenario.http2 ? 'HTTP/2 ' : ''}connection${scenario.connections === 1 ? '' : 's'}`;
  const rate = rateText(scenario, rates) + sloText(scenario.slo);
  if (!level) return `${count}${rate}`;
  if (level.reason === 'fixed-rate') return `${count} (auto, for the fixed rate)${rate}`;
  const stepsOf = (steps: LoadLevel['steps']) =>
    steps.map((s) => `${s.connections} → ${Math.round(s.requestsPerSecond)}`).join(', ');
  if (level.headSteps)
    return `${count} (auto: the smallest count at which both sides reached their throughput plateau; req/s by connections, base ${stepsOf(level.steps)}; head ${stepsOf(level.headSteps)})${rate}`;
  return `${count} (auto: the smallest count at base's throughput plateau; req/s by connections ${stepsOf(level.steps)})${rate}`;
}

/** ", then capacity at the SLO searched …": empty without an SLO. */
function sloText(slo: string | undefined): string {
  const targets = slo === undefined ? undefined : parseSlo(slo);
  if (!targets) return '';
  return `; then, in each round, each side's capacity at ${describeSlo(targets)}: the highest arrival rate that met it, in open-model steps of ${STEP_SECONDS.min}–${STEP_SECONDS.max} s from ${Math.round(CAPACITY_START * 100)} % of the higher side's throughput in the round (a side below that rate, ${Math.round(CAPACITY_START * 100)} % of its own), up by 25 % then bisected to within ${Math.round((CAPACITY_PRECISION - 1) * 100)} %`;
}

/** ", at N req/s fixed rate (S % of base's capacity, C req/s)": empty for a closed model. */
function rateText(scenario: { name: string; rate?: number | string }, rates?: readonly RateLevel[]): string {
  if (scenario.rate === undefined) return '';
  const level = rates?.find((r) => r.scenario === scenario.name);
  const at = `, at ${thousands(level?.rate ?? Number(scenario.rate))} req/s fixed rate`;
  return level
    ? `${at} (${level.share} % of base's capacity at a fixed rate, ${thousands(level.capacity)} req/s)`
    : at;
}

const thousands = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : String(n));
