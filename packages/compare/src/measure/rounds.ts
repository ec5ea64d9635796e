import type { Look, Measurements, RoundResult, RoundsStop, Side } from '../model.js';
import type { Settings } from '../settings/schema.js';
import { decideAfterPair, type StopQuestion } from '../verdict/sequential.js';
import { chooseLoadLevels, type LevelledSettings } from './load-level.js';
import { roundWindows, widening, widenServers } from './placement.js';
import { roundProgress } from './progress.js';
import { type RoundContext, runPairRound, runRound, type ServerSpec } from './round.js';

export interface ComparisonPlan {
  base: ServerSpec;
  head: ServerSpec;
  /** With every scenario's connections decided (see load-level.ts). */
  settings: LevelledSettings;
  /**
   * rounds: auto — stop on a clear verdict (default), measure the whole budget, or stop once the
   * caller's own question is answered (see MeasureRuntime).
   */
  until?: 'verdict' | 'budget' | StopQuestion;
}

/**
 * Runs rounds of both sides. With `slice` (the default), each round starts both servers and
 * measures every scenario in slices that alternate between them (see round-slices.ts); with
 * `slice: 0`, rounds of one server each, interleaved B H B H …. A fixed `rounds` runs that many pairs; `rounds: auto` looks at
 * the pairs so far after each pair (with alpha spending, see verdict/sequential.ts) and stops once
 * the run's outcome is clear, or when the next pair would pass `maxTime` or `maxRounds` is reached.
 * With `until: 'budget'` it never looks (no alpha is spent on looks: the intervals keep their full
 * level) and runs until the budget.
 */
export async function measureRounds(plan: ComparisonPlan, context: RoundContext): Promise<Measurements> {
  const { settings } = plan;
  const startedAt = new Date().toISOString();
  const started = Date.now();
  const results: Record<Side, RoundResult[]> = { base: [], head: [] };
  const order: Side[] = [];
  const auto = settings.rounds === 'auto';
  const most = settings.rounds === 'auto' ? settings.maxRounds : settings.rounds;
  const progress = roundProgress(
    context.onProgress,
    settings.rounds,
    auto ? undefined : 2 * most,
    auto ? settings.maxTime * 1000 : undefined,
  );
  const roundContext: RoundContext = { ...context, onProgress: progress.emit };
  const looks: Look[] = [];
  let spent = 0;
  let stop: RoundsStop = { rounds: 'fixed', reason: 'fixed', looks };
  const roundDone = (side: Side, pair: number) => {
    order.push(side);
    progress.stepDone();
    progress.emit({ phase: 'round', side, round: pair, message: `${side} round ${pair} done` });
  };
  let widened = false;
  for (let pair = 1; pair <= most; pair++) {
    await runOnePair(plan, pair, roundContext, results, roundDone);
    if (pair === 1 && !widened && widenAfterFirstPair(results, roundContext)) {
      // measured again with the servers on every CPU: every pair is measured the same way
      widened = true;
      results.base.length = 0;
      results.head.length = 0;
      order.length = 0;
      pair = 0;
      continue;
    }
    if (!auto) continue;
    if (plan.until === 'budget') {
      const elapsedMs = Date.now() - started;
      const atMax = pair >= settings.maxRounds;
      if (!atMax && elapsedMs + elapsedMs / pair <= settings.maxTime * 1000) continue;
      const reason = atMax ? 'max-rounds' : 'max-time';
      stop = { rounds: 'auto', reason, looks };
      progress.emit({
        phase: 'note',
        message: `${pair} pair${pair === 1 ? '' : 's'}: ${STOP_WORDS[reason]}`,
      });
      break;
    }
    const decision = decideAfterPair({
      measurements: results,
      settings,
      pairs: pair,
      elapsedMs: Date.now() - started,
      spent,
      ...(typeof plan.until === 'function' ? { question: plan.until } : {}),
    });
    if (decision.look) {
      looks.push(decision.look);
      spent += decision.look.alphaShare;
    }
    stop = { rounds: 'auto', reason: decision.stop ?? 'max-rounds', looks };
    if (decision.stop) {
      progress.emit({
        phase: 'note',
        message: `${pair} pair${pair === 1 ? '' : 's'}: ${STOP_WORDS[decision.stop]}`,
      });
      break;
    }
  }
  return {
    base: results.base,
    head: results.head,
    order,
    scenarios: settings.scenarios.map((s) => s.name),
    startedAt,
    finishedAt: new Date().toISOString(),
    stop,
  };
}

/**
 * One pair of rounds. With slices, both servers are up and the load alternates between them;
 * the side that starts first (and takes the first slice) alternates from pair to pair. Without,
 * base's round, then head's.
 */
async function runOnePair(
  plan: ComparisonPlan,
  pair: number,
  context: RoundContext,
  results: Record<Side, RoundResult[]>,
  roundDone: (side: Side, pair: number) => void,
): Promise<void> {
  const { settings } = plan;
  if (settings.slice > 0) {
    const sides = pair % 2 === 1 ? (['base', 'head'] as const) : (['head', 'base'] as const);
    const done = await runPairRound([plan[sides[0]], plan[sides[1]]], pair, settings, context);
    for (const result of done) results[result.side].push(result);
    roundDone('base', pair);
    roundDone('head', pair);
    return;
  }
  for (const side of ['base', 'head'] as const) {
    results[side].push(await runRound(plan[side], pair, settings, context));
    roundDone(side, pair);
  }
}

/**
 * After the first pair: when the servers sit on one CPU and a side's parallel work (pool threads,
 * workers, a cluster) was a large share of its CPU, gives them every CPU (see placement.ts) for
 * the rounds to come, says so, and returns true (the pair is then measured again).
 */
function widenAfterFirstPair(results: Record<Side, RoundResult[]>, context: RoundContext): boolean {
  const { placed } = context;
  const why = widening(placed?.placement, [...results.base, ...results.head].map(roundWindows));
  if (!placed || !why) return false;
  const note = widenServers(placed, why);
  context.serverPrefix = placed.serverPrefix;
  context.onProgress?.({ phase: 'note', message: note });
  return true;
}

const STOP_WORDS: Record<Exclude<RoundsStop['reason'], 'fixed'>, string> = {
  conclusive: 'the answer is clear, stopping',
  'max-time': 'the time budget (max-time) is spent, stopping',
  'max-rounds': 'max-rounds reached, stopping',
};

/** Rounds `hotpath profile` runs on one side: the fixed count, or for auto the default six. */
export const PROFILE_AUTO_ROUNDS = 6;

/** Profiles one side only (`hotpath profile`). */
export async function measureOne(
  spec: ServerSpec,
  settings: Settings,
  context: RoundContext,
): Promise<RoundResult[]> {
  const results: RoundResult[] = [];
  const rounds = settings.rounds === 'auto' ? PROFILE_AUTO_ROUNDS : settings.rounds;
  const levelled = (await chooseLoadLevels(spec, settings, context)).settings;
  const progress = roundProgress(context.onProgress, rounds, rounds);
  const roundContext: RoundContext = { ...context, onProgress: progress.emit };
  for (let round = 1; round <= rounds; round++) {
    results.push(await runRound(spec, round, levelled, roundContext));
    progress.stepDone();
    progress.emit({ phase: 'round', side: spec.side, round, message: `${spec.side} round ${round} done` });
  }
  return results;
}
