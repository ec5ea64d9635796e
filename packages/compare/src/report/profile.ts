import type { RoundResult } from '../model.js';
import type { ProfileReport } from '../run-artifacts.js';
import type { Settings } from '../settings/schema.js';
import { mergeRounds } from '../verdict/function-verdict.js';
import { retainedOver, roundMetrics } from '../verdict/round-pairs.js';
import { sideHealth } from './diagnosis.js';
import { echoSettings } from './report.js';

/** Turns one side's rounds into a ProfileReport. Pure. */
export function profileReport(rounds: readonly RoundResult[], settings: Settings): ProfileReport {
  const windows = rounds.flatMap((r) => r.scenarios);
  const profile = mergeRounds(windows.flatMap((w) => (w.profile ? [w.profile] : [])));
  const total = profile?.totalTicks || 1;
  return {
    schema: 'hotpath-profile/1',
    rounds: rounds.flatMap((r) =>
      r.scenarios.map((w) => ({ round: r.round, scenario: w.scenario, ...roundMetrics(w) })),
    ),
    profilers: [...new Set(windows.flatMap((w) => w.profilers))],
    topFunctions: (profile?.functions ?? [])
      .filter((f) => f.kind !== 'meta')
      .slice(0, 15)
      .map((f) => ({ name: f.name, file: f.file, line: f.line, kind: f.kind, share: f.self / total })),
    eventLoop: sideHealth(
      windows.flatMap((w) => w.monitors),
      windows.reduce((n, w) => n + w.load.requests.total, 0),
      windows.reduce((n, w) => n + retainedOver(w), 0),
    ),
    warnings: [...new Set(rounds.flatMap((r) => r.warnings))],
    settings: echoSettings(settings),
    profile,
  };
}
