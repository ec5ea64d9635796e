/** What a function is, for reports and diffs. */
export type FunctionKind =
  /** JavaScript (any tier: interpreted, Sparkplug, Maglev, TurboFan). */
  | 'js'
  /** C++ code of a binary whose symbols were resolved (node, libstdc++...). */
  | 'cpp'
  /** A shared library (or executable) whose symbol at that address is unknown. */
  | 'shared'
  /** The garbage collector (cpuprofile `(garbage collector)`). */
  | 'gc'
  /** V8 generated code that is not a user function: builtins, bytecode handlers, stubs, ICs. */
  | 'builtin'
  /** Compiled regular expressions. */
  | 'regexp'
  /** Bookkeeping nodes: `(program)`, `(idle)`, `(root)`. */
  | 'meta'
  /** An address nothing could resolve (V8's "UNKNOWN"). */
  | 'unknown';

export interface FunctionEntry {
  /** Name without any V8 optimisation-tier marker (`*`, `^`, `~`, `+`). */
  name: string;
  /** Script URL or binary path; empty when unknown. */
  file: string;
  /** 1-based line, 0 when unknown. */
  line: number;
  /** 1-based column, 0 when unknown. */
  column: number;
  kind: FunctionKind;
  /** Ticks (samples) in which this function was on top of the stack, all tiers summed. */
  self: number;
  /** Ticks (samples) in which this function was anywhere on the stack (counted once per sample). */
  total: number;
  /**
   * Optimisation tiers seen in samples: 'interpreted', 'sparkplug', 'maglev', 'turbofan',
   * 'maglev-context-specialised', 'turbofan-context-specialised' (V8's `+'` and `*'`), 'compiled'.
   */
  tiers?: string[];
}

/** One distinct call stack and how many samples had it. */
export interface StackSample {
  /** Indices into `Profile.functions`, outermost caller first, the sampled function last. */
  frames: number[];
  count: number;
}

/** Facts about the input that are not functions. */
export interface ProfileMeta {
  /** `v8-version` line of a tick log, e.g. "11.3.244.8-node.38". */
  v8Version?: string;
  /** Ticks taken while V8 was in its GC state (tick logs) or `(garbage collector)` samples. */
  gcTicks?: number;
  /** Ticks whose program counter nothing resolved (V8's "unaccounted"). */
  unaccountedTicks?: number;
  /** Lines of the log that were read. */
  lines?: number;
  /** Lines whose kind is unknown to this parser, by kind (first field). */
  unknownLines?: Record<string, number>;
  /** Lines that could not be parsed (bad numbers, too few fields, too long). */
  badLines?: number;
  /** Which profiler produced an in-process profile ('v8-profiler-next' or 'inspector'). */
  profiler?: string;
  /** Sampling duration in microseconds when known. */
  durationMicros?: number;
}

export interface Profile {
  source: 'cpuprofile' | 'tick-log';
  /** All samples (ticks) of the profile. */
  totalTicks: number;
  /** Sorted by self ticks, highest first. */
  functions: FunctionEntry[];
  /** Distinct stacks; their counts sum to `totalTicks`. */
  stacks: StackSample[];
  /** Everything the parser skipped, guessed or could not resolve. Never silently dropped. */
  warnings: string[];
  meta?: ProfileMeta;
}
