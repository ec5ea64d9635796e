// What the requests waited for, base → head: each round's downstream record (its processes merged)
// as calls and waiting per request by endpoint and by the user's function that made the calls, the
// mean over each side's rounds, and a paired interval of the per-pair change (like the allocation
// table's). And whether head's calls overlap less than base's: awaited in series. Shown beside the
// verdict, whose metrics are calls and waiting per request over every endpoint. Pure.
import { crossProfileKey } from '@hotpath/tick-parser';
import { OTHER } from '../downstream-model.js';
import { onPathShare, roundDownstream } from '../downstream-summary.js';
import type {
  DownstreamDiff,
  DownstreamEndpointRow,
  DownstreamWindow,
  ScenarioRound,
  WaitingFunctionRow,
} from '../model.js';
import { ON_PATH_MIN } from '../settings/metrics.js';
import { roundPairs } from './round-pairs.js';
import { mean, pairedDifference } from './statistics.js';

const TOP_ENDPOINTS = 10;
const TOP_FUNCTIONS = 10;

/**
 * Below this share of base's overlap (requests' union of in-flight time over the sum of their
 * calls' durations: 1 in series, 1/3 for three calls together), head's calls are said to be awaited
 * in series; and base's calls must have overlapped (union/sum at most OVERLAPPED).
 */
const SERIES_RATIO = 1.5;
const OVERLAPPED = 0.8;

type Rounds = readonly (ScenarioRound & { shard?: number })[];

/** One round's record as figures per request, keyed. */
interface RoundWaiting {
  requests: number;
  endpoints: Map<string, { calls: number; waiting: number; connections: number; bytes: number }>;
  endpointInfo: Map<string, Pick<DownstreamEndpointRow, 'endpoint' | 'protocol'>>;
  /** By function: the calls it issued and their waiting; `resumed`, the waiting of the calls it resumed to make. */
  functions: Map<string, { calls: number; waiting: number; resumed: number; outside: number }>;
  functionInfo: Map<string, { name: string; file: string; line: number }>;
  /** Union over sum of the requests' call times (1: in series); undefined without calls. */
  overlap?: number;
  /** The share of the calls made in a request's context (downstream-summary.ts onPathShare). */
  onPath: number;
}

/** A round's processes' records merged, per request; undefined unless every process has one. */
export function roundWaiting(round: ScenarioRound): RoundWaiting | undefined {
  const merged = roundDownstream(round.monitors);
  if (!merged || merged.requests <= 0) return undefined;
  return perRequest(merged);
}

function perRequest(w: DownstreamWindow): RoundWaiting {
  const n = w.requests;
  const endpoints = new Map<string, { calls: number; waiting: number; connections: number; bytes: number }>();
  const endpointInfo = new Map<string, Pick<DownstreamEndpointRow, 'endpoint' | 'protocol'>>();
  for (const e of w.endpoints) {
    endpoints.set(e.endpoint, {
      calls: e.calls / n,
      waiting: e.waitingMicros / n,
      connections: e.connections / n,
      bytes: (e.bytesOut + e.bytesIn) / n,
    });
    endpointInfo.set(e.endpoint, { endpoint: e.endpoint, ...(e.protocol ? { protocol: e.protocol } : {}) });
  }
  const functions = new Map<string, { calls: number; waiting: number; resumed: number; outside: number }>();
  const functionInfo = new Map<string, { name: string; file: string; line: number }>();
  for (const f of w.functions) {
    const key = crossProfileKey(f);
    const known = functions.get(key) ?? { calls: 0, waiting: 0, resumed: 0, outside: 0 };
    functions.set(key, {
      calls: known.calls + f.calls / n,
      waiting: known.waiting + f.waitingMicros / n,
      resumed: known.resumed + (f.resumedMicros ?? 0) / n,
      outside: known.outside + (f.outsideCalls ?? 0) / n,
    });
    if (!functionInfo.has(key)) functionInfo.set(key, { name: f.name, file: f.file, line: f.line });
  }
  const { unionMicros, sumMicros } = w.requestsWithCalls;
  return {
    requests: n,
    endpoints,
    endpointInfo,
    functions,
    functionInfo,
    ...(sumMicros > 0 ? { overlap: unionMicros / sumMicros } : {}),
    onPath: onPathShare(w),
  };
}

const meanOf = <T>(
  rounds: readonly RoundWaiting[],
  pick: (r: RoundWaiting) => T | undefined,
  value: (x: T) => number,
) =>
  rounds.length > 0
    ? mean(
        rounds.map((r) => {
          const x = pick(r);
          return x === undefined ? 0 : value(x);
        }),
      )
    : 0;

/**
 * The endpoints and the functions whose calls or waiting per request changed most, base → head,
 * with paired intervals over the round pairs whose both rounds have a record (two or more), and
 * whether head's calls overlap less than base's. Undefined unless both sides have records with calls.
 */
export function diffDownstream(base: Rounds, head: Rounds, alpha: number): DownstreamDiff | undefined {
  const of = new Map([...base, ...head].map((r) => [r, roundWaiting(r)]));
  const side = (rounds: Rounds) => rounds.flatMap((r) => of.get(r) ?? []);
  const b = side(base);
  const h = side(head);
  if (b.length === 0 || h.length === 0) return undefined;
  const any = (list: readonly RoundWaiting[]) => list.some((r) => r.endpoints.size > 0);
  if (!any(b) && !any(h)) return undefined;
  const pairs = roundPairs(base, head).flatMap(([x, y]) => {
    const px = of.get(x);
    const py = of.get(y);
    return px && py ? [[px, py] as const] : [];
  });
  const interval = (pick: (r: RoundWaiting) => number): [number, number] | undefined =>
    pairs.length >= 2
      ? pairedDifference(
          pairs.map(([x, y]) => pick(y) - pick(x)),
          alpha,
        ).ci
      : undefined;

  const endpoints = endpointRows(b, h, interval);
  const functions = functionRows(b, h, interval);

  const overlap = (list: readonly RoundWaiting[]) => {
    const values = list.flatMap((r) => (r.overlap === undefined ? [] : [r.overlap]));
    return values.length > 0 ? mean(values) : undefined;
  };
  const seriality = { base: overlap(b), head: overlap(h) };
  const onPath = { base: mean(b.map((r) => r.onPath)), head: mean(h.map((r) => r.onPath)) };
  const inSeries =
    onPath.base >= ON_PATH_MIN &&
    onPath.head >= ON_PATH_MIN &&
    seriality.base !== undefined &&
    seriality.head !== undefined &&
    seriality.base <= OVERLAPPED &&
    seriality.head >= seriality.base * SERIES_RATIO
      ? (awaitingMost(b, h) ?? [...functions].sort((x, y) => y.head.waiting - x.head.waiting)[0])
      : undefined;
  return {
    endpoints: endpoints.slice(0, TOP_ENDPOINTS),
    functions: functions.slice(0, TOP_FUNCTIONS),
    seriality,
    onPath,
    ...(inSeries ? { inSeries: { name: inSeries.name, file: inSeries.file, line: inSeries.line } } : {}),
    pairs: pairs.length,
    rounds: { base: b.length, head: h.length },
  };
}

/**
 * The function that awaits head's calls in series: the one whose waiting as the function that
 * resumed from an await to make calls grew most, base → head (the loop's function in `for (…)
 * await ask()`, where the functions' table names `ask`, which issued them). Undefined in records
 * without it.
 */
function awaitingMost(
  b: readonly RoundWaiting[],
  h: readonly RoundWaiting[],
): { name: string; file: string; line: number } | undefined {
  let best: { key: string; growth: number } | undefined;
  for (const key of new Set(h.flatMap((r) => [...r.functions.keys()]))) {
    const resumed = (list: readonly RoundWaiting[]) =>
      meanOf(
        list,
        (r) => r.functions.get(key),
        (f) => f.resumed,
      );
    const growth = resumed(h) - resumed(b);
    if (growth > 0 && (!best || growth > best.growth)) best = { key, growth };
  }
  const info = best && h.find((r) => r.functionInfo.has(best.key))?.functionInfo.get(best.key);
  return info && info.name !== OTHER ? info : undefined;
}

/** A paired interval of a per-round figure over the pairs (undefined under two pairs). */
type Interval = (pick: (r: RoundWaiting) => number) => [number, number] | undefined;

/** The endpoints, base → head: calls per request and what each call cost, largest change first. */
function endpointRows(
  b: readonly RoundWaiting[],
  h: readonly RoundWaiting[],
  interval: Interval,
): DownstreamEndpointRow[] {
  const endpoints: DownstreamEndpointRow[] = [];
  for (const key of new Set([...b, ...h].flatMap((r) => [...r.endpoints.keys()]))) {
    const info = h.find((r) => r.endpointInfo.has(key))?.endpointInfo.get(key) ??
      b.find((r) => r.endpointInfo.has(key))?.endpointInfo.get(key) ?? { endpoint: key };
    const figures = (list: readonly RoundWaiting[]) => {
      const calls = meanOf(
        list,
        (r) => r.endpoints.get(key),
        (e) => e.calls,
      );
      const waiting = meanOf(
        list,
        (r) => r.endpoints.get(key),
        (e) => e.waiting,
      );
      return {
        calls,
        waitingPerCall: calls > 0 ? waiting / calls : 0,
        connections: meanOf(
          list,
          (r) => r.endpoints.get(key),
          (e) => e.connections,
        ),
        bytes: meanOf(
          list,
          (r) => r.endpoints.get(key),
          (e) => e.bytes,
        ),
      };
    };
    const bf = figures(b);
    const hf = figures(h);
    const ci = interval((r) => r.endpoints.get(key)?.calls ?? 0);
    endpoints.push({
      ...info,
      base: bf,
      head: hf,
      callsChange: hf.calls - bf.calls,
      ...(ci ? { callsCi: ci } : {}),
      status: bf.calls === 0 ? 'new' : hf.calls === 0 ? 'vanished' : 'changed',
    });
  }
  endpoints.sort(
    (x, y) =>
      Math.abs(y.callsChange) - Math.abs(x.callsChange) ||
      y.head.calls * y.head.waitingPerCall - x.head.calls * x.head.waitingPerCall ||
      x.endpoint.localeCompare(y.endpoint),
  );
  return endpoints;
}

/**
 * A function whose calls were made outside any request at least this often is background work —
 * said only while most calls of both sides ran in a request's context (ON_PATH_MIN): where a
 * library loses the context (bluebird under old knex), the requests' own calls look outside.
 */
export const BACKGROUND_SHARE = 0.9;

/** The functions that made the calls, base → head: waiting per request, largest change first. */
function functionRows(
  b: readonly RoundWaiting[],
  h: readonly RoundWaiting[],
  interval: Interval,
): WaitingFunctionRow[] {
  const functions: WaitingFunctionRow[] = [];
  const contexts = mean(b.map((r) => r.onPath)) >= ON_PATH_MIN && mean(h.map((r) => r.onPath)) >= ON_PATH_MIN;
  for (const key of new Set([...b, ...h].flatMap((r) => [...r.functions.keys()]))) {
    const info =
      h.find((r) => r.functionInfo.has(key))?.functionInfo.get(key) ??
      b.find((r) => r.functionInfo.has(key))?.functionInfo.get(key);
    if (!info || info.name === OTHER) continue;
    const calls = (list: readonly RoundWaiting[]) =>
      meanOf(
        list,
        (r) => r.functions.get(key),
        (f) => f.calls,
      );
    const waiting = (list: readonly RoundWaiting[]) =>
      meanOf(
        list,
        (r) => r.functions.get(key),
        (f) => f.waiting,
      );
    const [bc, hc, bw, hw] = [calls(b), calls(h), waiting(b), waiting(h)];
    if (bc === 0 && hc === 0) continue;
    const outside = (list: readonly RoundWaiting[]) =>
      meanOf(
        list,
        (r) => r.functions.get(key),
        (f) => f.outside,
      );
    const ci = interval((r) => r.functions.get(key)?.waiting ?? 0);
    const callsCi = interval((r) => r.functions.get(key)?.calls ?? 0);
    functions.push({
      ...info,
      base: { calls: bc, waiting: bw },
      head: { calls: hc, waiting: hw },
      change: hw - bw,
      ...(ci ? { ci } : {}),
      callsChange: hc - bc,
      ...(callsCi ? { callsCi } : {}),
      status: bc === 0 ? 'new' : hc === 0 ? 'vanished' : 'changed',
      ...(contexts && outside(b) + outside(h) >= BACKGROUND_SHARE * (bc + hc)
        ? { background: true as const }
        : {}),
    });
  }
  // The function whose waiting grew most first; ties by calls.
  functions.sort(
    (x, y) =>
      Math.abs(y.change) - Math.abs(x.change) ||
      Math.abs(y.callsChange) - Math.abs(x.callsChange) ||
      x.name.localeCompare(y.name),
  );
  return functions;
}
