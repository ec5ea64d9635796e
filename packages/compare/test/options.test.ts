import { describe, expect, it } from 'vitest';
import { HotpathActionError } from '../src/errors.js';
import { parseSettings } from '../src/options.js';

describe('parseSettings (shared by Action inputs and CLI flags)', () => {
  it('applies the documented defaults', () => {
    const s = parseSettings({ start: 'node server.js' });
    expect(s).toMatchObject({
      url: '/',
      connections: 50,
      duration: 10,
      warmup: 3,
      rounds: 3,
      pipelining: 1,
      method: 'GET',
      profiler: 'cpuprofile',
      threshold: 0.1,
      hotThreshold: 0.05,
      failOnRegression: false,
      uploadArtifact: true,
      readyTimeout: 30,
      workingDirectory: '.',
    });
    expect(s.rate).toBeUndefined();
  });

  it('treats empty strings (unset Action inputs) as defaults', () => {
    const s = parseSettings({ start: 'x', rate: '', duration: '', headers: '', body: '' });
    expect(s.duration).toBe(10);
    expect(s.rate).toBeUndefined();
    expect(s.body).toBeUndefined();
  });

  it('parses headers, booleans and numbers', () => {
    const s = parseSettings({
      start: 'x',
      headers: 'Authorization: Bearer t\nX-Id:  42 ',
      'fail-on-regression': 'true',
      threshold: '7.5',
      rate: '200',
      url: 'http://127.0.0.1:$PORT/x',
    });
    expect(s.headers).toEqual({ Authorization: 'Bearer t', 'X-Id': '42' });
    expect(s.failOnRegression).toBe(true);
    expect(s.threshold).toBeCloseTo(0.075);
    expect(s.rate).toBe(200);
  });

  it.each([
    [
      { start: 'x', duration: 'abc' },
      'input',
      /invalid input "duration": expected a number of seconds > 0.*"abc"/,
    ],
    [{ start: 'x', connections: '0' }, 'input', /input "connections".*"0"/],
    [{ start: 'x', rounds: '2.5' }, 'flag', /invalid --rounds: expected a whole number/],
    [{ start: 'x', profiler: 'perf' }, 'flag', /--profiler: expected cpuprofile, prof or none/],
    [{ start: 'x', 'fail-on-regression': 'maybe' }, 'input', /expected true or false, got "maybe"/],
    [{ start: 'x', headers: 'no colon here' }, 'input', /"Name: value" lines/],
    [{ start: 'x', url: 'api/items' }, 'input', /input "url": expected a path starting with "\/"/],
    [{ start: '  ' }, 'input', /input "start": expected the command/],
    [{}, 'input', /input "start": expected the command/],
  ] as const)('rejects %j with one readable line', (raw, label, message) => {
    let error: unknown;
    try {
      parseSettings(raw, label);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(HotpathActionError);
    expect((error as HotpathActionError).code).toBe('HP_ACTION_INVALID_INPUT');
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });
});
