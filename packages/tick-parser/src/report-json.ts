import type { FunctionEntry, Profile, ProfileMeta } from './model.js';
import { summarize, type TickSummary } from './summary.js';

export interface JsonReport {
  source: Profile['source'];
  ticks: TickSummary;
  functions: Pick<FunctionEntry, 'name' | 'file' | 'line' | 'column' | 'kind' | 'self' | 'total' | 'tiers'>[];
  warnings: string[];
  meta: ProfileMeta;
}

/** The `--json` report: tick buckets and functions (self summed over tiers, names without tier marker). */
export function toJsonReport(profile: Profile, options: { top?: number } = {}): JsonReport {
  const limit = options.top ?? profile.functions.length;
  return {
    source: profile.source,
    ticks: summarize(profile),
    functions: profile.functions.slice(0, limit).map((fn) => {
      const entry: JsonReport['functions'][number] = {
        name: fn.name,
        file: fn.file,
        line: fn.line,
        column: fn.column,
        kind: fn.kind,
        self: fn.self,
        total: fn.total,
      };
      if (fn.tiers) entry.tiers = fn.tiers;
      return entry;
    }),
    warnings: profile.warnings,
    meta: profile.meta ?? {},
  };
}
