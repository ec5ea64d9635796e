// Each side's downstream stacks merged over its rounds into one Profile (tick-parser's shape) for
// report.html's waiting flame graphs: a stack is the user's frames that issued calls (outermost
// first) with the endpoint the calls went to as its leaf, and its count is the waiting the calls
// made, in µs per request, the mean over the side's rounds. The stacks' calls are estimates (a
// stack, held to 0.3 % of the main thread, stands for the calls to its endpoint since the last),
// as the functions' table's are. Pure.
import type { FunctionEntry, Profile } from '@hotpath/tick-parser';
import type { DownstreamEndpoint, DownstreamFunction } from '../downstream-model.js';
import { roundDownstream } from '../downstream-summary.js';
import type { ScenarioRound } from '../model.js';

/** A flame graph leaf's name: where the calls went, as the waiting table names it. */
export const endpointFrameName = (
  e: Pick<DownstreamEndpoint, 'endpoint' | 'protocol' | 'transport'>,
): string => `→ ${e.protocol ?? e.transport} ${e.endpoint}`;

/** Functions and endpoints of several windows under one numbering. */
class Frames {
  readonly functions: FunctionEntry[] = [];
  private readonly index = new Map<string, number>();

  private id(key: string, entry: () => FunctionEntry): number {
    let id = this.index.get(key);
    if (id === undefined) {
      id = this.functions.push(entry()) - 1;
      this.index.set(key, id);
    }
    return id;
  }

  ofFunction(f: DownstreamFunction): number {
    return this.id(`f\u0000${f.name}\u0000${f.file}\u0000${f.line}\u0000${f.column}`, () => ({
      name: f.name,
      file: f.file,
      line: f.line,
      column: f.column,
      kind: 'js',
      self: 0,
      total: 0,
    }));
  }

  ofEndpoint(e: DownstreamEndpoint): number {
    const name = endpointFrameName(e);
    return this.id(`e\u0000${name}`, () => ({
      name,
      file: '',
      line: 0,
      column: 0,
      kind: 'meta',
      self: 0,
      total: 0,
    }));
  }
}

/** The side's waiting per request by stack; undefined when no round recorded a stack. */
export function waitingFlameProfile(rounds: readonly ScenarioRound[]): Profile | undefined {
  const windows = rounds.flatMap((round) => {
    const window = roundDownstream(round.monitors);
    return window && window.requests > 0 && window.stacks.length > 0 ? [window] : [];
  });
  if (windows.length === 0) return undefined;
  const frames = new Frames();
  const stacks = new Map<string, { frames: number[]; count: number }>();
  for (const window of windows) {
    const perRequest = 1 / (window.requests * windows.length);
    for (const stack of window.stacks) {
      const endpoint = window.endpoints[stack.endpoint];
      if (!endpoint || !(stack.waitingMicros > 0)) continue;
      const path = stack.frames.flatMap((at) => {
        const f = window.functions[at];
        return f ? [frames.ofFunction(f)] : [];
      });
      path.push(frames.ofEndpoint(endpoint));
      const key = path.join(',');
      const count = stack.waitingMicros * perRequest;
      const known = stacks.get(key);
      if (known) known.count += count;
      else stacks.set(key, { frames: path, count });
    }
  }
  if (stacks.size === 0) return undefined;
  const functions = frames.functions;
  let totalTicks = 0;
  for (const { frames: path, count } of stacks.values()) {
    totalTicks += count;
    (functions[path[path.length - 1] as number] as FunctionEntry).self += count;
    for (const f of new Set(path)) (functions[f] as FunctionEntry).total += count;
  }
  return { source: 'cpuprofile', totalTicks, functions, stacks: [...stacks.values()], warnings: [] };
}
