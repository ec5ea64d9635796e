import { describe, expect, it } from 'vitest';
import { PLATEAU, plateauLevel, reachedPlateau } from '../src/measure/load-level.js';

const steps = (rps: number[]) =>
  rps.map((requestsPerSecond, i) => ({ connections: 2 ** i, requestsPerSecond }));

describe('connections: auto — the smallest count at the throughput plateau', () => {
  it.each([
    // a single-threaded server: the plateau at 2 connections, later steps only queue
    { rps: [3000, 5200, 5300, 5250, 5280], level: 2 },
    // a server waiting on I/O: throughput grows until 16
    { rps: [400, 800, 1500, 2900, 5000, 5100, 5050], level: 16 },
    // flat from the start (a server that serialises everything)
    { rps: [900, 910, 905], level: 1 },
    // a noisy step above the plateau does not move the choice past the first step within PLATEAU
    { rps: [3000, 5150, 5400, 5100, 5200], level: 2 },
  ])('$rps → $level', ({ rps, level }) => {
    expect(plateauLevel(steps(rps))).toBe(level);
  });

  it('stops the search after two steps that gained less than the plateau margin', () => {
    expect(reachedPlateau(steps([3000, 5200]))).toBe(false);
    expect(reachedPlateau(steps([3000, 5200, 5300]))).toBe(false);
    expect(reachedPlateau(steps([3000, 5200, 5300, 5250]))).toBe(true);
    // still growing past the margin at the last step: go on
    expect(reachedPlateau(steps([400, 800, 1500, 2900]))).toBe(false);
    expect(5200 / PLATEAU).toBeGreaterThan(5300);
  });

  it('picks the first step when no step served a request', () => {
    expect(plateauLevel(steps([0, 0, 0]))).toBe(1);
  });
});
