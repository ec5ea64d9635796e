import type { Profile } from './model.js';

export interface SpeedscopeFile {
  $schema: string;
  exporter: string;
  name: string;
  activeProfileIndex: number;
  shared: { frames: { name: string; file?: string; line?: number; col?: number }[] };
  profiles: {
    type: 'sampled';
    name: string;
    unit: 'none';
    startValue: number;
    endValue: number;
    samples: number[][];
    weights: number[];
  }[];
}

/** A speedscope file (sampled profile; one sample per distinct stack, weighted by its count). */
export function toSpeedscope(profile: Profile, options: { name?: string } = {}): SpeedscopeFile {
  const name = options.name ?? `${profile.source} profile`;
  return {
    $schema: 'https://www.speedscope.app/file-format-schema.json',
    exporter: '@hotpath/tick-parser',
    name,
    activeProfileIndex: 0,
    shared: {
      frames: profile.functions.map((fn) => {
        const frame: SpeedscopeFile['shared']['frames'][number] = { name: fn.name };
        if (fn.file) frame.file = fn.file;
        if (fn.line > 0) frame.line = fn.line;
        if (fn.column > 0) frame.col = fn.column;
        return frame;
      }),
    },
    profiles: [
      {
        type: 'sampled',
        name,
        unit: 'none',
        startValue: 0,
        endValue: profile.totalTicks,
        samples: profile.stacks.map((s) => s.frames),
        weights: profile.stacks.map((s) => s.count),
      },
    ],
  };
}
