import { readFileSync } from 'node:fs';
import * as built from '@hotpath/overload-guard';
import { describe, expect, it } from 'vitest';
import { GUARD_ERROR_CODES } from '../src/errors.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('the package', () => {
  it('documents every error code in the README error table', () => {
    const codes = Object.keys(GUARD_ERROR_CODES);
    expect(codes.length).toBeGreaterThan(0);
    for (const code of codes) expect(readme).toMatch(new RegExp(`\\|\\s*\`${code}\`\\s*\\|`));
  });

  it('documents every guard option in the README options table', () => {
    const guard = built.createGuard();
    try {
      for (const option of [
        ...Object.keys(guard.options),
        'healthCheck',
        'body',
        'onShed',
        'healthPath',
        'concurrency',
      ]) {
        expect(readme, option).toMatch(new RegExp(`\\|\\s*\`${option}\`\\s*\\|`));
      }
    } finally {
      guard.close();
    }
  });

  it('exports the public API from the built package by its name', () => {
    expect(Object.keys(built).sort()).toEqual(
      ['GUARD_ERROR_CODES', 'HotpathGuardError', 'OverloadGuard', 'createGuard', 'createMonitor'].sort(),
    );
    const guard = built.createGuard();
    try {
      for (const adapter of ['http', 'express', 'koa', 'restify'] as const)
        expect(typeof guard[adapter]).toBe('function');
      expect(typeof guard.fastify).toBe('function');
      expect(guard).toBeInstanceOf(built.OverloadGuard);
    } finally {
      guard.close();
    }
    const monitor = built.createMonitor({ sampleInterval: 0 });
    expect(monitor.snapshot().heapUsedBytes).toBeGreaterThan(0);
    monitor.close();
    expect(new built.HotpathGuardError('HP_GUARD_CLOSED').message).toBe(GUARD_ERROR_CODES.HP_GUARD_CLOSED);
  });
});
