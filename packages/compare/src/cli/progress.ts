import type { ProgressEvent } from '../measure/progress.js';

/** Where progress goes: stderr, or a test's stand-in. */
export interface ProgressOutput {
  readonly isTTY?: boolean;
  /** Terminal width; 0 or undefined when the terminal does not say. */
  readonly columns?: number;
  write(text: string): unknown;
}

/** Width assumed when a terminal reports none (0 columns, or no number at all). */
const FALLBACK_COLUMNS = 80;

/** Control characters (a PR's server output, names) become spaces: one inert line. */
const inert = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');

/**
 * One line that fits a terminal of `columns`: inert, and one column short of the edge (a
 * full-width line wraps on some terminals). 0 columns get the 80-column fallback.
 */
export function fitLine(line: string, columns: number | undefined): string {
  const width = columns !== undefined && columns > 0 ? columns : FALLBACK_COLUMNS;
  return inert(line).slice(0, Math.max(1, width - 1));
}

/** 42 s, 3 min 05 s, 1 h 02 min. */
export function formatEta(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

const rps = (n: number) => `${Math.round(n).toLocaleString('en-US')} req/s`;

/** `round 2/6` for a fixed count, `round 3 (auto)` while rounds run until the answer is clear. */
function roundText(event: ProgressEvent): string {
  if (event.round === undefined) return '';
  if (event.rounds === 'auto') return `round ${event.round} (auto)`;
  return event.rounds === undefined ? `round ${event.round}` : `round ${event.round}/${event.rounds}`;
}

/** `ETA 1 min 10 s`, or with rounds 'auto' the budget left: `budget left 4 min 10 s`. */
function timeText(event: ProgressEvent): string {
  if (event.rounds === 'auto' && event.budgetMs !== undefined && event.elapsedMs !== undefined)
    return `budget left ${formatEta(event.budgetMs - event.elapsedMs)}`;
  return event.etaMs === undefined ? '' : `ETA ${formatEta(event.etaMs)}`;
}

const join = (parts: string[]) => parts.filter((p) => p !== '').join(' · ');

/** The live line of a terminal for a round event. */
export function liveLine(event: ProgressEvent): string {
  const what =
    event.phase === 'tick'
      ? `${event.window === 'warmup' ? 'warm-up' : 'measuring'} ${event.second}/${event.seconds} s`
      : event.phase === 'warmup'
        ? `warm-up ${event.seconds} s`
        : event.phase === 'measure'
          ? `measuring ${event.seconds} s`
          : event.phase === 'start'
            ? 'starting the server'
            : event.phase === 'measured' || event.phase === 'round'
              ? 'done'
              : '';
  return join([
    'hotpath',
    roundText(event),
    event.side ?? '',
    event.scenario === undefined ? '' : JSON.stringify(event.scenario),
    what,
    event.requestsPerSecond === undefined ? '' : rps(event.requestsPerSecond),
    timeText(event),
  ]);
}

/** The plain (pipe, CI log) line for a measured window: its requests/s and the ETA. */
export function plainLine(event: ProgressEvent): string {
  return join([
    `hotpath: ${roundText(event)} ${event.side ?? ''}`.trimEnd(),
    event.scenario === undefined ? '' : JSON.stringify(event.scenario),
    event.requestsPerSecond === undefined ? '' : rps(event.requestsPerSecond),
    timeText(event),
  ]);
}

/**
 * Shows a comparison's progress on stderr. A terminal gets one live line (round i/n, side,
 * scenario, what runs, requests/s, ETA), rewritten in place and never wider than the terminal;
 * a pipe or CI log gets plain lines: the preparation steps, one line per round and scenario
 * with its requests/s and the ETA, notes. `quiet` shows nothing.
 */
export class ProgressReporter {
  private live = false;

  constructor(
    private readonly out: ProgressOutput,
    private readonly quiet = false,
  ) {}

  readonly onProgress = (event: ProgressEvent): void => {
    if (this.quiet) return;
    if (this.out.isTTY) {
      const line = event.round === undefined ? `hotpath: ${event.message}` : liveLine(event);
      this.out.write(`\r\u001b[2K${fitLine(line, this.out.columns)}`);
      this.live = true;
      return;
    }
    if (event.phase === 'prepare' || event.phase === 'note' || event.phase === 'analyse')
      this.out.write(`${inert(`hotpath: ${event.message}`)}\n`);
    else if (event.phase === 'measured') this.out.write(`${inert(plainLine(event))}\n`);
  };

  /** Clears the live line before the report is printed. */
  done(): void {
    if (this.live) this.out.write('\r\u001b[2K');
    this.live = false;
  }
}
