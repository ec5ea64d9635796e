// The settings' types are derived from the table (src/settings/types.ts): these checks run in
// `pnpm typecheck` (expectTypeOf) and pin what users of compare() and the config file rely on.
import { describe, expectTypeOf, it } from 'vitest';
import type { CompareConfig, MetricName, Scenario, Settings } from '../src/index.js';

describe('Settings and CompareConfig, derived from the settings table', () => {
  it('resolves each setting to its unit, with a value wherever the table has a default', () => {
    expectTypeOf<Settings['rounds']>().toEqualTypeOf<number | 'auto'>();
    expectTypeOf<Settings['threshold']>().toEqualTypeOf<number>();
    expectTypeOf<Settings['duration']>().toEqualTypeOf<number>();
    expectTypeOf<Settings['metrics']>().toEqualTypeOf<MetricName[]>();
    expectTypeOf<Settings['failOn']>().toEqualTypeOf<'metrics' | 'functions' | 'both'>();
    expectTypeOf<Settings['profiler']>().toEqualTypeOf<'cpuprofile' | 'prof' | 'none'>();
    expectTypeOf<Settings['failOnRegression']>().toEqualTypeOf<boolean>();
    expectTypeOf<Settings['out']>().toEqualTypeOf<string>();
    // no default: may be unset
    expectTypeOf<Settings['start']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Settings['passEnv']>().toEqualTypeOf<string[] | undefined>();
    expectTypeOf<Settings['scenarios']>().toEqualTypeOf<Scenario[]>();
    // the load keys live in the scenarios, not at the top of resolved settings
    expectTypeOf<Settings>().not.toHaveProperty('connections');
    expectTypeOf<Scenario['connections']>().toEqualTypeOf<number | 'auto'>();
    expectTypeOf<Scenario['headers']>().toEqualTypeOf<Record<string, string>>();
    expectTypeOf<Scenario['rate']>().toEqualTypeOf<number | `${number}%` | undefined>();
  });

  it('takes every setting as optional in a config, durations also as text', () => {
    expectTypeOf<CompareConfig['duration']>().toEqualTypeOf<number | string | undefined>();
    expectTypeOf<CompareConfig['rounds']>().toEqualTypeOf<number | 'auto' | undefined>();
    expectTypeOf<CompareConfig['connections']>().toEqualTypeOf<number | 'auto' | undefined>();
    expectTypeOf<CompareConfig['metrics']>().toEqualTypeOf<MetricName[] | undefined>();
    expectTypeOf<{ start: 'node server.js'; duration: '2s' }>().toMatchTypeOf<CompareConfig>();
  });
});
