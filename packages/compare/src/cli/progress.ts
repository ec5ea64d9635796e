import type { ProgressEvent } from '../index.js';
// Control characters and bidi controls (a PR's server output, names) become spaces: one inert line.
import { inert } from '../printable.js';

/** Where progress goes: stderr, or a test's stand-in. */
export interface ProgressOutput {
  readonly isTTY?: boolean;
  /** Terminal width; 0 or undefined when the terminal does not say. */
  readonly columns?: number;
  write(text: string): unknown;
}

/** Width assumed when a terminal reports none (0 columns, or no number at all). */
const FALLBACK_COLUMNS = 80;

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
function roundText(event: ProgressEvent, compact = false): string {
  if (event.round === undefined) return '';
  if (event.rounds === 'auto') return compact ? `round ${event.round}` : `round ${event.round} (auto)`;
  return event.rounds === undefined ? `round ${event.round}` : `round ${event.round}/${event.rounds}`;
}

/** 42 s → `0:42`, 185 s → `3:05`, 1 h 02 min → `1:02:00`: the narrow terminal's clock. */
function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const two = (n: number) => String(n).padStart(2, '0');
  return s < 3600
    ? `${Math.floor(s / 60)}:${two(s % 60)}`
    : `${Math.floor(s / 3600)}:${two(Math.floor((s % 3600) / 60))}:${two(s % 60)}`;
}

/**
 * `ETA 1 min 10 s`, or with rounds 'auto' the budget left: `budget left 4 min 10 s`; compact:
 * `ETA 1:10`, `left 4:10`.
 */
function timeText(event: ProgressEvent, compact = false): string {
  if (event.rounds === 'auto' && event.budgetMs !== undefined && event.elapsedMs !== undefined) {
    const left = event.budgetMs - event.elapsedMs;
    return compact ? `left ${clock(left)}` : `budget left ${formatEta(left)}`;
  }
  if (event.etaMs === undefined) return '';
  return compact ? `ETA ${clock(event.etaMs)}` : `ETA ${formatEta(event.etaMs)}`;
}

const join = (parts: string[]) => parts.filter((p) => p !== '').join(' · ');

function whatRuns(event: ProgressEvent): string {
  return event.phase === 'tick'
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
}

const scenarioText = (event: ProgressEvent) =>
  event.scenario === undefined ? '' : JSON.stringify(event.scenario);

/** The live line of a terminal for a round event. */
export function liveLine(event: ProgressEvent): string {
  return join([
    'hotpath',
    roundText(event),
    event.side ?? '',
    scenarioText(event),
    whatRuns(event),
    event.requestsPerSecond === undefined ? '' : rps(event.requestsPerSecond),
    timeText(event),
  ]);
}

/**
 * The live line for a terminal of `columns` (0 or undefined: 80). When the whole line does not
 * fit, it loses words before facts: no "hotpath" label, short round and clock (`round 3`,
 * `left 2:58`), then the scenario's name is shortened (`"/api/items/sea…"`), so the round, the
 * side, the window, the requests/s and the time left stay in sight; only a terminal too narrow
 * for even that is cut at the edge.
 */
export function fitLiveLine(event: ProgressEvent, columns: number | undefined): string {
  const width = (columns !== undefined && columns > 0 ? columns : FALLBACK_COLUMNS) - 1;
  const full = inert(liveLine(event));
  if (full.length <= width) return full;
  const parts = (scenario: string) =>
    join([
      roundText(event, true),
      event.side ?? '',
      scenario,
      whatRuns(event),
      event.requestsPerSecond === undefined ? '' : rps(event.requestsPerSecond),
      timeText(event, true),
    ]);
  const name = inert(scenarioText(event));
  const compact = parts(name);
  if (compact.length <= width || name === '') return fitLine(compact, columns);
  // Room for the name: the width minus the line without it (and without its separator).
  const room = width - parts('').length - 3;
  const short = room >= 5 ? `${name.slice(0, room - 2)}…"` : '';
  return fitLine(parts(short), columns);
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
      const line =
        event.round === undefined
          ? fitLine(`hotpath: ${event.message}`, this.out.columns)
          : fitLiveLine(event, this.out.columns);
      this.out.write(`\r\u001b[2K${line}`);
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
