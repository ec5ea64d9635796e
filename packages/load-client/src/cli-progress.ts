import type { Tick } from './load-engine.js';

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
 * One line that fits a terminal of `columns`: control characters become spaces and the line
 * stops one column short of the edge (a full-width line would wrap on some terminals). A
 * terminal that reports 0 columns gets the 80-column fallback, not an empty or cut-short line.
 */
export function fitLine(line: string, columns: number | undefined): string {
  const width = columns !== undefined && columns > 0 ? columns : FALLBACK_COLUMNS;
  return line.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, Math.max(1, width - 1));
}

/** A piped log gets each of the first 10 seconds, then every 10th: bounded for long runs. */
export function loggedSecond(second: number): boolean {
  return second <= 10 || second % 10 === 0;
}

/** Seconds to one decimal: 2.5 → "2.5 s", 10 → "10 s". */
const seconds = (s: number) => `${Math.max(0, Math.round(s * 10) / 10)} s`;
/** A time left, in whole seconds (rounded up: "0 s" only when nothing is left). */
const left = (s: number) => `${Math.max(0, Math.ceil(s - 1e-9))} s`;

export interface LoadPlan {
  /** Measured seconds, when the run is time-bound. */
  duration?: number;
  /** Measured requests, when the run is amount-bound. */
  amount?: number;
  /** Seconds of warm-up. */
  warmup: number;
}

/**
 * hotpath-load's progress on stderr. A terminal gets one live line, rewritten each second and
 * never wider than the terminal; a pipe or CI log gets plain lines (see loggedSecond). Warm-up
 * seconds and amount-bound runs (-a) report too, with an ETA.
 */
export class LoadProgress {
  private done = 0;
  private shown = false;

  constructor(
    private readonly out: ProgressOutput,
    private readonly plan: LoadPlan,
  ) {}

  /** A second of warm-up. */
  warmup(tick: Tick): void {
    this.show(
      tick.second,
      `warm-up ${tick.second}/${seconds(this.plan.warmup)}  ${tick.requests} req/s  ${tick.errors} errors  measuring in ${left(this.plan.warmup - tick.second)}`,
    );
  }

  /** A measured second. */
  tick(tick: Tick): void {
    this.done += tick.requests + tick.errors;
    const rate = `${tick.requests} req/s  ${tick.errors} errors`;
    const { duration, amount } = this.plan;
    if (amount !== undefined) {
      const perSecond = this.done / tick.second;
      const eta = perSecond > 0 ? ` ETA ${left((amount - this.done) / perSecond)}` : '';
      this.show(tick.second, `${bar(this.done / amount)}${this.done}/${amount} requests  ${rate} ${eta}`);
    } else if (duration !== undefined) {
      this.show(
        tick.second,
        `${bar(tick.second / duration)}${tick.second}/${seconds(duration)}  ${rate}  ETA ${left(duration - tick.second)}`,
      );
    } else this.show(tick.second, `${tick.second} s  ${rate}`);
  }

  /** Clears the live line (a terminal) before the result is printed. */
  finish(): void {
    if (this.shown && this.out.isTTY) this.out.write('\r\u001b[2K');
  }

  private show(second: number, line: string): void {
    const text = line.replace(/ {3,}/g, '  ').trimEnd();
    if (this.out.isTTY) {
      this.out.write(`\r\u001b[2K${fitLine(`hotpath-load: ${text}`, this.out.columns)}`);
      this.shown = true;
    } else if (loggedSecond(second)) {
      this.out.write(`hotpath-load: ${text.replace(/^\[[#-]+\] /, '')}\n`);
    }
  }
}

/** `[#####-----] ` for a share 0..1. */
function bar(share: number): string {
  const width = 20;
  const filled = Math.max(0, Math.min(width, Math.round(share * width)));
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] `;
}
