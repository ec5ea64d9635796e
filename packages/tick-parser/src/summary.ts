import type { Profile } from './model.js';

/** The `--prof-process` summary buckets, in ticks. */
export interface TickSummary {
  total: number;
  /** Samples at addresses nothing resolved. */
  unaccounted: number;
  /** JS functions plus V8 generated code (builtins, stubs, regexps), as --prof-process counts them. */
  js: number;
  cpp: number;
  /** Samples in V8's GC state (they are also counted in the bucket of the code they hit). */
  gc: number;
  /** Samples inside a library or executable where no symbol was found. */
  shared: number;
  /** Bookkeeping samples of .cpuprofile files: (program), (idle). */
  other: number;
}

export function summarize(profile: Profile): TickSummary {
  const summary: TickSummary = {
    total: profile.totalTicks,
    unaccounted: 0,
    js: 0,
    cpp: 0,
    gc: 0,
    shared: 0,
    other: 0,
  };
  let gcFunctions = 0;
  for (const fn of profile.functions) {
    switch (fn.kind) {
      case 'js':
      case 'builtin':
      case 'regexp':
        summary.js += fn.self;
        break;
      case 'cpp':
        summary.cpp += fn.self;
        break;
      case 'shared':
        summary.shared += fn.self;
        break;
      case 'unknown':
        summary.unaccounted += fn.self;
        break;
      case 'gc':
        gcFunctions += fn.self;
        break;
      default:
        summary.other += fn.self;
    }
  }
  summary.gc = profile.meta?.gcTicks ?? gcFunctions;
  return summary;
}
