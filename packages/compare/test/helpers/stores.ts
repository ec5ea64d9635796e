// Real PostgreSQL and Redis for the tests: the repository's one module that starts them
// (scripts/stores.mjs, which `pnpm demo waiting` uses too). `storesMissing()` is the reason a test
// is skipped (the binaries are absent); .ci/run installs them, so in CI a test never skips.
import {
  freePort,
  postgresMissing,
  redisMissing,
  type StartedPostgres,
  type StartedStore,
  startPostgres,
  startRedis,
} from '../../../../scripts/stores.mjs';

export { freePort, type StartedPostgres, type StartedStore, startPostgres, startRedis };

/** Why PostgreSQL or Redis cannot run here (a skipped test's name says it), or undefined. */
export function storesMissing(): string | undefined {
  const missing = [postgresMissing(), redisMissing()].filter(Boolean);
  return missing.length ? missing.join('; ') : undefined;
}

/** Both stores started, or neither left running when one fails: stop() always stops both. */
export async function startStores(): Promise<{
  postgres: StartedPostgres;
  redis: StartedStore;
  stop(): Promise<void>;
}> {
  const postgres = await startPostgres();
  let redis: StartedStore;
  try {
    redis = await startRedis();
  } catch (err) {
    await postgres.stop();
    throw err;
  }
  return {
    postgres,
    redis,
    stop: async () => {
      await Promise.allSettled([postgres.stop(), redis.stop()]);
    },
  };
}
