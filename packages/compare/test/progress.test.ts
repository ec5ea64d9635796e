import { describe, expect, it } from 'vitest';
import {
  fitLine,
  fitLiveLine,
  formatEta,
  liveLine,
  ProgressReporter,
  plainLine,
} from '../src/cli/progress.js';
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
      expect(line.length).toBeLessThanOrEqual(width - 1);
      expect(line.startsWith('round 2/6 · head')).toBe(true);
    }
    const wide = sink(true, 200);
    new ProgressReporter(wide).onProgress(tick);
    expect(wide.written[0]).toBe(`\r\u001b[2K${liveLine(tick)}`);
    expect(fitLine('abcdef', 4)).toBe('abc');
    expect(fitLine('a\u001b[31mb\nc', 80)).toBe('a [31mb c');
  });

  // Seen in a first run on an 80-column terminal: the line was cut at the edge, "budget le".
  it('on 80 columns keeps the requests/s and the time left, shortening words and then the name', () => {
    const auto = {
      ...tick,
      rounds: 'auto' as const,
      scenario: '/token',
      second: 1,
      requestsPerSecond: 12456,
      budgetMs: 180_000,
      elapsedMs: 2_000,
      etaMs: undefined,
    };
    expect(liveLine(auto).length).toBeGreaterThan(79);
    expect(fitLiveLine(auto, 80)).toBe(
      'round 2 · head · "/token" · measuring 1/5 s · 12,456 req/s · left 2:58',
    );
    expect(fitLiveLine(tick, 0)).toBe(
      'round 2/6 · head · "login" · measuring 3/5 s · 12,345 req/s · ETA 1:10',
    );
    const long = { ...auto, scenario: '/api/v2/organisations/acme/projects/search?q=something-long' };
    const line = fitLiveLine(long, 80);
    expect(line.length).toBe(79);
    expect(line).toBe('round 2 · head · "/api/v2/organi…" · measuring 1/5 s · 12,456 req/s · left 2:58');
    // too narrow for the facts: cut at the edge, never wider
    expect(fitLiveLine(long, 30)).toHaveLength(29);
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
