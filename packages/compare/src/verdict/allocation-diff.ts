// Which functions allocate more, base → head: each round's sampled allocation profile as bytes
// allocated per request by function (scaled to the round's measured allocated bytes per request),
// the mean over each side's rounds, and a paired interval of the per-pair change like the hot
// functions'. The same for what a load left alive (the survivors profile of the first round's load
// after its window, per request of that load). Shown, not part of the verdict. Pure.
import { crossProfileKey } from '@hotpath/tick-parser';
import type {
  AllocationDiff,
  AllocationFunction,
  AllocationProfile,
  AllocationRow,
  ScenarioRound,
} from '../model.js';
import { isProbeFrame } from './hot-functions.js';
import { roundMetrics, roundPairs } from './round-pairs.js';
import { mean, pairedDifference } from './statistics.js';

const TOP = 10;

/** One round's bytes per request by function (name + file), and where each function is. */
interface RoundAllocations {
  perRequest: Map<string, number>;
  where: Map<string, AllocationFunction>;
  total: number;
}

/**
 * What turns one round's sampled bytes into bytes allocated per request: the round's measured
 * allocated bytes per request (from the memory edges) over its sampled bytes, or one over its
 * requests where the round has no memory edges. Undefined without an allocation profile or requests.
 */
export function allocationScale(round: ScenarioRound): number | undefined {
  const profile = round.allocations;
  const requests = round.load.requests.total;
  if (!profile || requests <= 0) return undefined;
  let sampled = 0;
  for (const f of profile.functions) sampled += f.selfBytes;
  const measured = roundMetrics(round).allocatedBytesPerRequest;
  return Number.isFinite(measured) ? (sampled > 0 ? measured / sampled : 0) : 1 / requests;
}

/**
 * Each function's bytes allocated per request in one round: its share of the sampled bytes times
 * the round's allocated bytes per request (from the memory edges), or its sampled bytes over the
 * requests where the round has none. Undefined without an allocation profile or requests.
 */
export function roundAllocations(round: ScenarioRound): RoundAllocations | undefined {
  const profile = round.allocations;
  const scale = allocationScale(round);
  if (!profile || scale === undefined) return undefined;
  return bytesPerRequest(profile, scale);
}

/**
 * Each function's bytes still alive after the round's warm-up per warm-up request: its sampled
 * bytes (V8's estimate, already scaled by the sampler) over the warm-up's requests. Undefined
 * without a survivors profile.
 */
export function roundSurvivors(round: ScenarioRound): RoundAllocations | undefined {
  const survivors = round.survivors;
  if (!survivors || !(survivors.warmupRequests > 0)) return undefined;
  return bytesPerRequest(survivors.profile, 1 / survivors.warmupRequests);
}

/** A profile's functions (by name + file) as bytes per request: sampled bytes times `scale`. */
function bytesPerRequest(profile: AllocationProfile, scale: number): RoundAllocations {
  let sampled = 0;
  for (const f of profile.functions) sampled += f.selfBytes;
  const bytes = new Map<string, number>();
  const where = new Map<string, AllocationFunction>();
  for (const f of profile.functions) {
    const key = crossProfileKey(f);
    bytes.set(key, (bytes.get(key) ?? 0) + f.selfBytes * scale);
    const known = where.get(key);
    if (!known || f.selfBytes > known.selfBytes) where.set(key, f);
  }
  return { perRequest: bytes, where, total: sampled * scale };
}

type Rounds = readonly (ScenarioRound & { shard?: number })[];

/** The mean over rounds of a function's bytes per request (0 in a round where it allocated nothing). */
const meanOf = (rounds: readonly RoundAllocations[], key: string) =>
  rounds.length > 0 ? mean(rounds.map((r) => r.perRequest.get(key) ?? 0)) : 0;

/**
 * The functions whose bytes allocated per request changed most, base → head, with a paired
 * interval (level 1 − alpha) over the round pairs whose both rounds have an allocation profile,
 * where there are two or more. Undefined unless both sides have allocation profiles.
 */
export function diffAllocations(base: Rounds, head: Rounds, alpha: number): AllocationDiff | undefined {
  return diffPerRequest(base, head, alpha, roundAllocations);
}

/**
 * The functions whose bytes still alive after the warm-up, per warm-up request, changed most,
 * base → head, with a paired interval like diffAllocations'. Undefined unless both sides have
 * survivors profiles.
 */
export function diffSurvivors(base: Rounds, head: Rounds, alpha: number): AllocationDiff | undefined {
  return diffPerRequest(base, head, alpha, roundSurvivors);
}

/** The diff of each round's bytes per request by function, as `read` gives them. */
function diffPerRequest(
  base: Rounds,
  head: Rounds,
  alpha: number,
  read: (round: ScenarioRound) => RoundAllocations | undefined,
): AllocationDiff | undefined {
  const of = new Map([...base, ...head].map((r) => [r, read(r)]));
  const side = (rounds: Rounds) => rounds.flatMap((r) => of.get(r) ?? []);
  const b = side(base);
  const h = side(head);
  if (b.length === 0 || h.length === 0) return undefined;
  const pairs = roundPairs(base, head).flatMap(([x, y]) => {
    const px = of.get(x);
    const py = of.get(y);
    return px && py ? [[px, py] as const] : [];
  });
  const keys = new Set([...b, ...h].flatMap((r) => [...r.perRequest.keys()]));
  const rows: AllocationRow[] = [];
  for (const key of keys) {
    const at =
      h.find((r) => r.where.has(key))?.where.get(key) ?? b.find((r) => r.where.has(key))?.where.get(key);
    if (!at || isProbeFrame(at.file)) continue;
    const baseBytes = meanOf(b, key);
    const headBytes = meanOf(h, key);
    // A function on the stacks that allocated nothing itself is no row.
    if (baseBytes === 0 && headBytes === 0) continue;
    const ci =
      pairs.length >= 2
        ? pairedDifference(
            pairs.map(([x, y]) => (y.perRequest.get(key) ?? 0) - (x.perRequest.get(key) ?? 0)),
            alpha,
          ).ci
        : undefined;
    rows.push({
      name: at.name,
      file: at.file,
      line: at.line,
      base: baseBytes,
      head: headBytes,
      change: headBytes - baseBytes,
      ...(ci ? { ci } : {}),
      status: baseBytes === 0 ? 'new' : headBytes === 0 ? 'vanished' : 'changed',
    });
  }
  rows.sort((x, y) => Math.abs(y.change) - Math.abs(x.change) || x.name.localeCompare(y.name));
  return {
    rows: rows.slice(0, TOP),
    baseTotal: mean(b.map((r) => r.total)),
    headTotal: mean(h.map((r) => r.total)),
    pairs: pairs.length,
    rounds: { base: b.length, head: h.length },
  };
}
