import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createGuard, type GuardOptions, HotpathGuardError, type OverloadGuard } from '../src/index.js';
import { get } from './http-client.js';

const cleanup: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function guardedServer(options: GuardOptions): Promise<{ guard: OverloadGuard; port: number }> {
  const guard = createGuard(options);
  cleanup.push(() => guard.close());
  const server: Server = createServer(guard.http((_req, res) => res.end('hello')));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { guard, port: (server.address() as { port: number }).port };
}

/** Resolves once `predicate` holds, polling every 5 ms; rejects after `ms`. */
async function until(predicate: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const errorsOf = (guard: OverloadGuard): HotpathGuardError[] => {
  const errors: HotpathGuardError[] = [];
  guard.on('healthCheckError', (error) => errors.push(error));
  return errors;
};

describe('healthCheck that fails', () => {
  it.each([
    [
      'throws',
      () => {
        throw new Error('database down');
      },
      'HP_GUARD_HEALTH_CHECK_FAILED',
      /database down/,
    ],
    ['rejects', () => Promise.reject(new Error('cache down')), 'HP_GUARD_HEALTH_CHECK_FAILED', /cache down/],
    ['returns false', () => false, undefined, undefined],
    ['resolves false', () => Promise.resolve(false), undefined, undefined],
    [
      'answers something other than a boolean',
      () => 'ok' as unknown as boolean,
      'HP_GUARD_HEALTH_CHECK_FAILED',
      /answered "ok": expected true or false/,
    ],
    [
      'never settles',
      () => new Promise<boolean>(() => {}),
      'HP_GUARD_HEALTH_CHECK_TIMEOUT',
      /did not settle within healthCheckTimeout \(15 ms\)/,
    ],
  ])(
    '%s: sheds, reports it, and calls the check again on every interval',
    async (_name, failing, code, message) => {
      let calls = 0;
      const { guard, port } = await guardedServer({
        healthCheck: () => {
          calls++;
          return failing();
        },
        healthCheckInterval: 30,
        healthCheckTimeout: 15,
      });
      const errors = errorsOf(guard);
      await until(() => guard.status().overloaded, 'the guard sheds');
      expect(guard.status()).toMatchObject({ healthy: false, reason: 'healthCheck' });
      expect((await get(port)).status).toBe(503);
      const seen = calls;
      await until(() => calls >= seen + 3, 'three more checks ran');
      if (code === undefined) expect(errors).toEqual([]);
      else {
        expect(errors.length).toBeGreaterThanOrEqual(1);
        for (const error of errors) {
          expect(error).toBeInstanceOf(HotpathGuardError);
          expect(error.code).toBe(code);
          expect(error.message).toMatch(message as RegExp);
        }
      }
    },
  );
});

describe('healthCheck that recovers', () => {
  it.each([
    ['threw', () => Promise.reject(new Error('down'))],
    ['answered false', () => false],
    ['never settled', () => new Promise<boolean>(() => {})],
  ])('one that %s once counts for that interval only', async (_name, failOnce) => {
    let calls = 0;
    const { guard, port } = await guardedServer({
      healthCheck: () => (++calls === 2 ? failOnce() : true),
      healthCheckInterval: 40,
      healthCheckTimeout: 20,
      recoveryTime: 30,
    });
    await once(guard, 'overloaded');
    await once(guard, 'recovered');
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(guard.status()).toMatchObject({ healthy: true, overloaded: false });
    expect((await get(port)).status).toBe(200);
  });

  it('ignores the late answer of a check that timed out', async () => {
    let calls = 0;
    let releaseFirst: (value: boolean) => void = () => {};
    const { guard } = await guardedServer({
      healthCheck: () => {
        calls++;
        if (calls === 1) return new Promise<boolean>((resolve) => (releaseFirst = resolve));
        return new Promise<boolean>(() => {}); // every later check hangs
      },
      healthCheckInterval: 40,
      healthCheckTimeout: 20,
    });
    await until(() => !guard.status().healthy, 'the first check timed out');
    releaseFirst(true);
    await until(() => calls >= 3, 'two more checks ran');
    expect(guard.status().healthy).toBe(false);
  });

  it('never has two checks in flight: a slow check that settles in time is not called again meanwhile', async () => {
    let running = 0;
    let most = 0;
    let calls = 0;
    const { guard } = await guardedServer({
      healthCheck: async () => {
        calls++;
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 10));
        running--;
        return true;
      },
      healthCheckInterval: 60,
    });
    await until(() => calls >= 4, 'four checks ran');
    expect(most).toBe(1);
    expect(guard.status().healthy).toBe(true);
    expect(guard.options.healthCheckTimeout).toBe(60);
  });
});

describe('healthCheckTimeout option', () => {
  it('defaults to healthCheckInterval and may not exceed it', () => {
    const guard = createGuard({ healthCheckInterval: 250 });
    guard.close();
    expect(guard.options.healthCheckTimeout).toBe(250);
    expect(() => createGuard({ healthCheckInterval: 100, healthCheckTimeout: 200 })).toThrow(
      /invalid healthCheckTimeout 200: expected a number of milliseconds no greater than healthCheckInterval/,
    );
    expect(() => createGuard({ healthCheckTimeout: 0 })).toThrow(
      expect.objectContaining({ code: 'HP_GUARD_INVALID_OPTION' }),
    );
  });
});
