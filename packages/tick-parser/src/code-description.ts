import type { FunctionKind } from './model.js';

/** What a `code-creation` event says a piece of code is, reduced to the model's fields. */
export interface CodeDescription {
  name: string;
  file: string;
  line: number;
  column: number;
  kind: FunctionKind;
  /** Optimisation tier of JS code ('interpreted', 'sparkplug', 'maglev', 'turbofan', ... see TIERS). */
  tier?: string;
  /** Function id in the profile being built, assigned when a sample first lands in this code. */
  fn: number;
  /** A bytecode handler outside the binary: V8's tick processor leaves it out of stacks. */
  bytecodeHandler?: true;
}

/**
 * The tier markers V8 writes after a JS function's `code-creation` (CodeKindToMarker): the code
 * kind, and a trailing `'` for code specialised to one function context (V8 12 and later).
 */
const TIERS: Record<string, string> = {
  '': 'compiled',
  '~': 'interpreted',
  '^': 'sparkplug',
  '+': 'maglev',
  "+'": 'maglev-context-specialised',
  '*': 'turbofan',
  "*'": 'turbofan-context-specialised',
};

const LOCATION = /^(.*?):(\d+)(?::(\d+))?$/;

/**
 * Describes code from its `code-creation` fields. JS functions (events that name a
 * SharedFunctionInfo) are named like `handle /srv/app.js:4:16`: function name, then location.
 */
export function describeCode(
  type: string,
  rawName: string,
  hasFunction: boolean,
  state: string,
): CodeDescription {
  if (hasFunction && type !== 'RegExp') {
    const space = rawName.lastIndexOf(' ');
    const name =
      space >= 1 ? rawName.slice(0, space) : space === 0 ? '(anonymous)' : rawName || '(anonymous)';
    const location = space >= 0 ? rawName.slice(space + 1) : '';
    const match = LOCATION.exec(location);
    return {
      name,
      file: match?.[1] ?? location,
      line: match ? Number(match[2]) : 0,
      column: match?.[3] ? Number(match[3]) : 0,
      kind: 'js',
      tier: TIERS[state] ?? `unknown tier "${state}"`,
      fn: -1,
    };
  }
  if (type === 'RegExp')
    return { name: `RegExp: ${rawName}`, file: '', line: 0, column: 0, kind: 'regexp', fn: -1 };
  return { name: `${type}: ${rawName}`, file: '', line: 0, column: 0, kind: 'builtin', fn: -1 };
}
