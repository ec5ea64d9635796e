// The bisect search as a pure state machine over first-parent history: commits[0] is good,
// commits[n] is bad, and exactly the commits between are candidates. Each step compares a probe
// against the current good commit (one paired comparison): regressed moves bad to the probe,
// unchanged or improved moves good to it, an unbuildable probe is skipped (as `git bisect skip`).
// What to probe next, when the search is done, and how many steps remain are answered here; the
// comparisons themselves are run/bisect.ts's.

/** What one step's comparison said about its probe. */
export type StepVerdict = 'bad' | 'good' | 'skip';

export interface SearchState {
  /** Index of the newest commit known good (the probe compares against it). */
  good: number;
  /** Index of the oldest commit known bad. */
  bad: number;
  /** Indices that could not be built or started (never probed again). */
  skipped: ReadonlySet<number>;
}

export const startSearch = (commits: number): SearchState => ({
  good: 0,
  bad: commits - 1,
  skipped: new Set(),
});

/** Candidates strictly between good and bad that can still be probed. */
export function openCandidates(state: SearchState): number[] {
  const out: number[] = [];
  for (let i = state.good + 1; i < state.bad; i++) if (!state.skipped.has(i)) out.push(i);
  return out;
}

/**
 * The next probe: the open candidate nearest the middle of (good, bad) — the later one on a tie,
 * so a skipped middle is passed over towards bad first — or undefined when none is left (the
 * culprit is bad, or bad or one of the skipped commits just before it).
 */
export function nextProbe(state: SearchState): number | undefined {
  const middle = (state.good + state.bad) / 2;
  let best: number | undefined;
  for (const i of openCandidates(state)) {
    if (best === undefined) best = i;
    const d = Math.abs(i - middle);
    const bestD = Math.abs(best - middle);
    if (d < bestD || (d === bestD && i > best)) best = i;
  }
  return best;
}

/** The state after a step's verdict on `probe`. */
export function applyVerdict(state: SearchState, probe: number, verdict: StepVerdict): SearchState {
  if (verdict === 'bad') return { ...state, bad: probe };
  if (verdict === 'good') return { ...state, good: probe };
  return { ...state, skipped: new Set([...state.skipped, probe]) };
}

/**
 * Comparisons still to come, at most: a binary search over the open candidates (⌈log₂(k + 1)⌉
 * for k of them), plus one for the culprit's own comparison when the last step may not be it.
 */
export function stepsLeft(state: SearchState): number {
  const k = openCandidates(state).length;
  return Math.ceil(Math.log2(k + 1)) + 1;
}

/** The commits the culprit is among once no candidate is open: bad and the skipped ones before it. */
export function suspects(state: SearchState): number[] {
  const out: number[] = [];
  for (let i = state.good + 1; i <= state.bad; i++) out.push(i);
  return out;
}
