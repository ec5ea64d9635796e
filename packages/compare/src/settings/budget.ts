// What a run's time budget must hold: the cost of one pair of rounds from the settings, and the
// budget that holds PAIRS_BUDGETED of them. `hotpath init` writes that budget into the config it
// writes; a run whose scenarios name an SLO and whose budget nobody set gets it too
// (resolveSettings), so that capacity, the metric such a scenario asks about, can be decided.

/** Pairs a budget leaves room for: the first look is at 3, a change near the threshold takes more. */
export const PAIRS_BUDGETED = 6;

/** Seconds a scenario's two capacity searches (one a side) add to a pair of rounds. */
export const SLO_SEARCH_SECONDS = 40;

/**
 * One pair of rounds costs each scenario both sides' warm-up and window, half as much again for
 * the round's own work (starting servers, the survivors profile, the analysis): 21 s at 2 + 5 s,
 * as a real repository's five routes read, 107 s a pair on a shared 2-core runner. A scenario
 * with an SLO adds both sides' capacity searches. Pure.
 */
export function pairSeconds(scenarios: number, withSlo: number, warmup: number, duration: number): number {
  return scenarios * 2 * (warmup + duration) * 1.5 + withSlo * SLO_SEARCH_SECONDS;
}

/** The budget, in whole minutes (seconds), that holds PAIRS_BUDGETED pairs of `pair` seconds. Pure. */
export const budgetHolding = (pair: number): number => Math.ceil((PAIRS_BUDGETED * pair) / 60) * 60;
