import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { renderFlameGraph, toFolded } from '@hotpath/tick-parser';
import { reportSettings, roundMetrics } from '../analyse/analyse.js';
import { sideHealth } from '../analyse/diagnosis.js';
import { merge } from '../measure/profiles.js';
import type { RoundResult } from '../measure/round.js';
import type { Settings } from '../settings/schema.js';
import { share, shortLocation } from './format.js';

/** `hotpath profile`: one side's load numbers, its hottest functions and event-loop health. */
export function writeProfileOnly(dir: string, rounds: RoundResult[], settings: Settings) {
  const out = resolve(dir);
  mkdirSync(out, { recursive: true });
  const windows = rounds.flatMap((r) => r.scenarios);
  const profile = merge(windows.flatMap((w) => (w.profile ? [w.profile] : [])));
  const metrics = rounds.flatMap((r) =>
    r.scenarios.map((w) => ({ round: r.round, scenario: w.scenario, ...roundMetrics(w) })),
  );
  const health = sideHealth(windows.flatMap((w) => w.monitors));
  const top = (profile?.functions ?? [])
    .filter((f) => f.kind !== 'meta')
    .slice(0, 15)
    .map((f) => ({
      name: f.name,
      file: f.file,
      line: f.line,
      kind: f.kind,
      share: f.self / (profile?.totalTicks || 1),
    }));
  const summary = {
    schema: 'hotpath-profile/1',
    rounds: metrics,
    profilers: [...new Set(windows.flatMap((w) => w.profilers))],
    topFunctions: top,
    eventLoop: health,
    warnings: [...new Set(rounds.flatMap((r) => r.warnings))],
    settings: reportSettings(settings),
  };
  writeFileSync(join(out, 'profile.json'), `${JSON.stringify(summary, null, 2)}\n`);
  if (profile) writeFileSync(join(out, 'head.folded'), toFolded(profile));
  if (profile)
    writeFileSync(
      join(out, 'head-flamegraph.svg'),
      renderFlameGraph(profile, { format: 'svg', title: 'hotpath profile' }),
    );
  const many = settings.scenarios.length > 1;
  const lines = metrics.map(
    (m) =>
      `round ${m.round}${many ? ` ${m.scenario}` : ''}: ${m.requestsPerSecond.toFixed(1)} req/s, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms, errors ${(m.errorRate * 100).toFixed(2)} %`,
  );
  lines.push('', `hottest functions (self time, profiler: ${summary.profilers.join(', ') || 'none'}):`);
  for (const f of top.slice(0, 10))
    lines.push(`  ${share(f.share).padStart(7)}  ${f.name}  ${shortLocation(f.file, f.line)}`);
  if (health) {
    lines.push(
      '',
      `event loop: delay mean ${health.delayMean.toFixed(1)} ms, p99 ${health.delayP99.toFixed(1)} ms, utilisation ${(health.utilization * 100).toFixed(0)} %`,
    );
  }
  for (const w of summary.warnings) lines.push(`warning: ${w}`);
  return { dir: out, summary, text: `${lines.join('\n')}\n` };
}
