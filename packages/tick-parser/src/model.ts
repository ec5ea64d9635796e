/** What a function is, for reports and diffs. */
export type FunctionKind = 'js' | 'cpp' | 'shared' | 'gc' | 'builtin' | 'meta';

export interface FunctionEntry {
  /** Name without any V8 optimisation-tier marker. */
  name: string;
  /** Script URL or binary path; empty when unknown. */
  file: string;
  /** 1-based line, 0 when unknown. */
  line: number;
  /** 1-based column, 0 when unknown. */
  column: number;
  kind: FunctionKind;
  /** Ticks (samples) in which this function was on top of the stack. */
  self: number;
}

export interface Profile {
  source: 'cpuprofile' | 'tick-log';
  totalTicks: number;
  /** Sorted by self ticks, highest first. */
  functions: FunctionEntry[];
}
