import type { Measurements, RoundResult, Side } from '../model.js';
import type { Settings } from '../settings/schema.js';
import { roundProgress } from './progress.js';
import { type RoundContext, runRound, type ServerSpec } from './round.js';

export interface ComparisonPlan {
  base: ServerSpec;
  head: ServerSpec;
  settings: Settings;
}

/** The round order: B H B H … (`rounds` of each). */
export function interleave(rounds: number): Side[] {
  const order: Side[] = [];
  for (let i = 0; i < rounds; i++) order.push('base', 'head');
  return order;
}

/**
 * Runs every round of both sides, interleaved B H B H …; each round starts the side's server
 * once and measures every scenario in turn.
 */
export async function measureRounds(plan: ComparisonPlan, context: RoundContext): Promise<Measurements> {
  const startedAt = new Date().toISOString();
  const order = interleave(plan.settings.rounds);
  const results: Record<Side, RoundResult[]> = { base: [], head: [] };
  const progress = roundProgress(context.onProgress, plan.settings.rounds, order.length);
  const roundContext: RoundContext = { ...context, onProgress: progress.emit };
  for (const side of order) {
    const round = results[side].length + 1;
    results[side].push(await runRound(plan[side], round, plan.settings, roundContext));
    progress.stepDone();
    progress.emit({ phase: 'round', side, round, message: `${side} round ${round} done` });
  }
  return {
    base: results.base,
    head: results.head,
    order,
    scenarios: plan.settings.scenarios.map((s) => s.name),
    startedAt,
    finishedAt: new Date().toISOString(),
  };
}

/** Profiles one side only (`hotpath profile`). */
export async function measureOne(
  spec: ServerSpec,
  settings: Settings,
  context: RoundContext,
): Promise<RoundResult[]> {
  const results: RoundResult[] = [];
  const progress = roundProgress(context.onProgress, settings.rounds, settings.rounds);
  const roundContext: RoundContext = { ...context, onProgress: progress.emit };
  for (let round = 1; round <= settings.rounds; round++) {
    results.push(await runRound(spec, round, settings, roundContext));
    progress.stepDone();
    progress.emit({ phase: 'round', side: spec.side, round, message: `${spec.side} round ${round} done` });
  }
  return results;
}
