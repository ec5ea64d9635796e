import { readFileSync } from 'node:fs';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
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

  it('exports the public API from the built package by its name', async () => {
    expect(Object.keys(built).sort()).toEqual(
      ['GUARD_ERROR_CODES', 'HotpathGuardError', 'OverloadGuard', 'createGuard', 'createMonitor'].sort(),
    );
    const guard = built.createGuard();
    try {
      expect(guard).toBeInstanceOf(built.OverloadGuard);
      // Every adapter of the built package lets a request through while the loop is idle.
      const req = new IncomingMessage(new Socket());
      req.url = '/';
      const res = new ServerResponse(req);
      const passed: string[] = [];
      guard.http(() => passed.push('http'))(req, res);
      guard.express()(req, res, () => passed.push('express'));
      guard.restify()(req, res, (value) => passed.push(`restify ${value}`));
      await guard.koa()(
        { req, res, url: '/', method: 'GET', status: 404, body: undefined, type: '', set: () => {} },
        async () => passed.push('koa'),
      );
      const hooks: string[] = [];
      guard.fastify({ addHook: (name) => hooks.push(name), route: () => undefined }, {}, () =>
        passed.push('fastify'),
      );
      expect(passed).toEqual(['http', 'express', 'restify undefined', 'koa', 'fastify']);
      expect(hooks).toEqual(['onRoute']);
    } finally {
      guard.close();
    }
    const monitor = built.createMonitor({ sampleInterval: 0 });
    expect(monitor.snapshot().heapUsedBytes).toBeGreaterThan(0);
    monitor.close();
    expect(new built.HotpathGuardError('HP_GUARD_CLOSED').message).toBe(GUARD_ERROR_CODES.HP_GUARD_CLOSED);
  });
});
