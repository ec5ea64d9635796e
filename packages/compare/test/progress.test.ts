import { describe, expect, it } from 'vitest';
import { fitLine, formatEta, liveLine, ProgressReporter, plainLine } from '../src/cli/progress.js';
import type { ProgressEvent } from '../src/measure/progress.js';

const tick: ProgressEvent = {
  phase: 'tick',
  message: 'x',
  side: 'head',
  round: 2,
  rounds: 6,
  scenario: 'login',
  window: 'measure',
  second: 3,
  seconds: 5,
  requestsPerSecond: 12345,
  elapsedMs: 30_000,
  etaMs: 70_000,
};

function sink(isTTY: boolean, columns?: number) {
  const written: string[] = [];
  return { isTTY, columns, written, write: (t: string) => written.push(t) };
}

describe('progress reporter', () => {
  it('the live line has round i/n, side, scenario, window, req/s and ETA', () => {
    expect(liveLine(tick)).toBe(
      'hotpath · round 2/6 · head · "login" · measuring 3/5 s · 12,345 req/s · ETA 1 min 10 s',
    );
  });

  it("with rounds 'auto' shows the count so far and the budget left instead of i/n", () => {
    const auto = { ...tick, rounds: 'auto' as const, budgetMs: 300_000, etaMs: undefined };
    expect(liveLine(auto)).toBe(
      'hotpath · round 2 (auto) · head · "login" · measuring 3/5 s · 12,345 req/s · budget left 4 min 30 s',
    );
    expect(plainLine({ ...auto, phase: 'measured' })).toBe(
      'hotpath: round 2 (auto) head · "login" · 12,345 req/s · budget left 4 min 30 s',
    );
  });

  it('never writes wider than the terminal; 0 columns get the 80-column fallback', () => {
    for (const columns of [20, 0, undefined]) {
      const out = sink(true, columns);
      new ProgressReporter(out).onProgress(tick);
      const line = out.written[0]?.replace('\r\u001b[2K', '') ?? '';
      const width = columns ? columns : 80;
      expect(line.length).toBe(Math.min(width - 1, liveLine(tick).length));
      expect(line.startsWith('hotpath · round 2/6')).toBe(true);
    }
    expect(fitLine('abcdef', 4)).toBe('abc');
    expect(fitLine('a\u001b[31mb\nc', 80)).toBe('a [31mb c');
  });

  it('piped: plain lines only for measured windows and steps, none for ticks; quiet writes nothing', () => {
    const out = sink(false);
    const reporter = new ProgressReporter(out);
    reporter.onProgress(tick);
    reporter.onProgress({ ...tick, phase: 'measured' });
    reporter.onProgress({ phase: 'prepare', message: 'base: git worktree abc' });
    reporter.done();
    expect(out.written).toEqual([
      'hotpath: round 2/6 head · "login" · 12,345 req/s · ETA 1 min 10 s\n',
      'hotpath: base: git worktree abc\n',
    ]);
    const quiet = sink(true);
    new ProgressReporter(quiet, true).onProgress(tick);
    expect(quiet.written).toEqual([]);
  });

  it('formats times left', () => {
    expect(formatEta(42_000)).toBe('42 s');
    expect(formatEta(185_000)).toBe('3 min 05 s');
    expect(formatEta(3_720_000)).toBe('1 h 02 min');
    expect(formatEta(-5)).toBe('0 s');
  });
});
