import type { FunctionEntry } from './model.js';

/**
 * A one-line label for a function: `name file:line:column` for located code, the bare name
 * otherwise. Code without a script name but with a position (`new Function`, `eval`) reads
 * `name :line:column`, as V8 writes it.
 */
export function functionLabel(fn: FunctionEntry): string {
  if (fn.kind === 'js' && (fn.file || fn.line > 0)) {
    if (fn.line > 0 && fn.column > 0) return `${fn.name} ${fn.file}:${fn.line}:${fn.column}`;
    return fn.line > 0 ? `${fn.name} ${fn.file}:${fn.line}` : `${fn.name} ${fn.file}`;
  }
  return fn.name;
}

/** The identity of a function inside one profile: kind, name, file and position. */
export function functionKey(fn: Pick<FunctionEntry, 'kind' | 'name' | 'file' | 'line' | 'column'>): string {
  return `${fn.kind}\u0000${fn.name}\u0000${fn.file}\u0000${fn.line}\u0000${fn.column}`;
}

/** The identity of a function across profiles: name and file, not line (edits above it do not matter). */
export function crossProfileKey(fn: Pick<FunctionEntry, 'name' | 'file'>): string {
  return `${fn.name}\u0000${fn.file}`;
}
