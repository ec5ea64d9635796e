import type { Side } from '../model.js';

/**
 * A step of a running comparison, for progress displays (the CLI's reporter, the Action's log,
 * compare()'s `onProgress`). `message` is always a readable line; the other fields let a
 * display build its own:
 * - `prepare`: checkouts, installs, builds (message only);
 * - `start`: a round of `side` begins; `measure`: a scenario's measured window begins;
 *   `warmup`: its warm-up begins;
 * - `tick`: one second of a window (`window`, `second` of `seconds`, `requestsPerSecond`);
 * - `measured`: a scenario's window ended (`requestsPerSecond` over the window);
 * - `round`: a round ended; `note`: anything else worth a line (a retry, setup-command);
 * - `analyse`: statistics and report files.
 * Round events carry `rounds` (a number, or 'auto' when rounds run until the answer is clear
 * or `budgetMs` is spent), `elapsedMs` since the first round began and `etaMs` when known.
 */
export interface ProgressEvent {
  phase: 'prepare' | 'start' | 'warmup' | 'measure' | 'tick' | 'measured' | 'round' | 'note' | 'analyse';
  message: string;
  side?: Side;
  /** 1-based round of `side`. */
  round?: number;
  rounds?: number | 'auto';
  scenario?: string;
  /** `tick`: which window the second belongs to. */
  window?: 'warmup' | 'measure';
  /** `tick`: the second of the window (1-based) and the window's length in seconds. */
  second?: number;
  seconds?: number;
  requestsPerSecond?: number;
  /** Milliseconds since the first round began. */
  elapsedMs?: number;
  /** With rounds 'auto': the time budget (max-time) in milliseconds. */
  budgetMs?: number;
  /** Milliseconds left, estimated from the rounds done so far. */
  etaMs?: number;
}

/** What a round reports; the round loop adds rounds, elapsedMs, budgetMs and etaMs. */
export type RoundEvent = Omit<ProgressEvent, 'rounds' | 'elapsedMs' | 'budgetMs' | 'etaMs'>;

/**
 * Wraps a round loop's listener: every event gets the loop's `rounds`, the time since `began`
 * and an ETA from the share of `steps` done (when the number of steps is known).
 */
export function roundProgress(
  onProgress: ((event: ProgressEvent) => void) | undefined,
  rounds: number | 'auto',
  steps: number | undefined,
  budgetMs?: number,
): { emit: (event: RoundEvent) => void; stepDone: () => void } {
  const began = Date.now();
  let done = 0;
  let doneAt = 0;
  return {
    emit: (event) => {
      if (!onProgress) return;
      const elapsedMs = Date.now() - began;
      const etaMs =
        steps !== undefined && done > 0 ? Math.max(0, (doneAt / done) * steps - elapsedMs) : undefined;
      onProgress({
        ...event,
        rounds,
        elapsedMs,
        ...(budgetMs === undefined ? {} : { budgetMs }),
        ...(etaMs === undefined ? {} : { etaMs }),
      });
    },
    stepDone: () => {
      done++;
      doneAt = Date.now() - began;
    },
  };
}
