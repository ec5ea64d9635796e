// The drift history: every drift run's summary (head vs a fixed reference, paired on one runner),
// grouped in series by reference. Its schema is versioned and validated with zod when read; its
// size is bounded when written. Pure: reading and writing files or branches is store.ts's job.
import { z } from 'zod';
import { HotpathCompareError } from '../errors.js';
import { OUTCOMES } from '../model.js';

export const HISTORY_SCHEMA = 'hotpath-history/1';

/** Points kept per series (the oldest are dropped beyond it). */
export const MAX_POINTS_PER_SERIES = 400;
/** Series kept (one per reference; the oldest reference's series is dropped beyond it). */
export const MAX_SERIES = 12;
/** Size of the history file at most (the oldest points go first beyond it). */
export const MAX_BYTES = 4 * 1024 * 1024;
/** Grown functions kept per scenario and point. */
export const MAX_FUNCTIONS = 5;

const sha = z.string().regex(/^[0-9a-f]{40,64}$/, 'expected a full commit sha');
const finite = z.number().finite();

const metricPoint = z.object({
  metric: z.string().regex(/^[A-Za-z][A-Za-z0-9]{0,39}$/),
  better: z.enum(['higher', 'lower']),
  /** Relative change head vs reference (errorRate: absolute change of the rate). */
  change: finite,
  /** The run's interval of `change` (the level the report used). */
  ci: z.tuple([z.number(), z.number()]),
  /**
   * Standard error of the change on the analysis scale (log1p for relative metrics), recovered
   * from the interval; what the change-point method weighs points by.
   */
  se: z.number().nonnegative(),
  pairs: z.number().int().nonnegative(),
  /** Smallest change this run could detect, percent, when the report says. */
  detectable: z.number().nonnegative().optional(),
  outcome: z.enum(OUTCOMES).optional(),
  inVerdict: z.boolean(),
  /** The change that counted in the run, in the unit of `change` (retained bytes: bytes per request). */
  margin: z.number().nonnegative().optional(),
});

const grownFunction = z.object({
  name: z.string().max(300),
  file: z.string().max(300),
  line: z.number().int().nonnegative(),
  /** Growth of the self-time share, 0..1. */
  delta: finite,
  significant: z.boolean().optional(),
});

const scenarioPoint = z.object({
  name: z.string().max(200),
  metrics: z.array(metricPoint).max(20),
  functions: z.array(grownFunction).max(MAX_FUNCTIONS),
});

const point = z.object({
  /** Unique per drift run: what merging two writers' histories deduplicates on. */
  id: z.string().regex(/^[\w.:-]{1,100}$/),
  commit: sha,
  date: z.string().datetime({ offset: true }),
  threshold: z.number().nonnegative(),
  scenarios: z.array(scenarioPoint).max(50),
});

const reference = z.object({
  /** The tag or ref as given or chosen (e.g. v1.4.0). */
  ref: z.string().max(200),
  sha,
});

const series = z.object({
  reference,
  points: z.array(point).max(MAX_POINTS_PER_SERIES),
});

const historySchema = z.object({
  schema: z.literal(HISTORY_SCHEMA),
  series: z.array(series).max(MAX_SERIES),
});

export type History = z.infer<typeof historySchema>;
export type HistorySeries = z.infer<typeof series>;
export type HistoryPoint = z.infer<typeof point>;
export type ScenarioPoint = z.infer<typeof scenarioPoint>;
export type MetricPoint = z.infer<typeof metricPoint>;
export type GrownFunction = z.infer<typeof grownFunction>;
export type Reference = z.infer<typeof reference>;

export const emptyHistory = (): History => ({ schema: HISTORY_SCHEMA, series: [] });

/** Parses and validates a history's text; `name` says where it came from, for the error. */
export function parseHistory(text: string, name: string): History {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new HotpathCompareError('HP_COMPARE_HISTORY', `${name} is not JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const schema = (raw as { schema?: unknown })?.schema;
  if (schema !== HISTORY_SCHEMA)
    throw new HotpathCompareError(
      'HP_COMPARE_HISTORY',
      `${name} is not a hotpath history of schema ${HISTORY_SCHEMA} (its schema is ${JSON.stringify(schema ?? null)})`,
    );
  const parsed = historySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? issue.path.join('.') : '';
    throw new HotpathCompareError(
      'HP_COMPARE_HISTORY',
      `${name} does not match the history schema ${HISTORY_SCHEMA}: ${where ? `${where}: ` : ''}${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/**
 * The history as written: at most MAX_BYTES (the oldest points of the oldest series dropped
 * first), checked against the schema, so nothing unreadable is written.
 */
export function historyText(history: History): string {
  let kept = history;
  let text = `${JSON.stringify(kept, null, 1)}\n`;
  while (text.length > MAX_BYTES && kept.series.length > 0) {
    const [oldest, ...rest] = kept.series;
    const excess = (text.length - MAX_BYTES) / text.length;
    const drop = Math.max(1, Math.ceil((oldest?.points.length ?? 0) * Math.min(1, excess)));
    const points = oldest?.points.slice(drop) ?? [];
    kept = {
      schema: HISTORY_SCHEMA,
      series: oldest && points.length > 0 ? [{ reference: oldest.reference, points }, ...rest] : rest,
    };
    text = `${JSON.stringify(kept, null, 1)}\n`;
  }
  parseHistory(text, 'the history about to be written');
  return text;
}

const byDate = (a: HistoryPoint, b: HistoryPoint) =>
  a.date < b.date ? -1 : a.date > b.date ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * Adds a point to the series of its reference (a new series when the reference is new: points
 * against different references are not paired). A point whose id is already there is not added
 * again. Points stay in date order; the size bounds drop the oldest points and series.
 */
export function appendPoint(history: History, ref: Reference, added: HistoryPoint): History {
  const seriesList = history.series.map((s) => ({ reference: s.reference, points: [...s.points] }));
  if (seriesList.some((s) => s.points.some((p) => p.id === added.id))) return boundHistory({ ...history });
  let target = seriesList.find((s) => s.reference.sha === ref.sha);
  if (!target) {
    target = { reference: ref, points: [] };
    seriesList.push(target);
  }
  target.points.push(added);
  target.points.sort(byDate);
  return boundHistory({ schema: HISTORY_SCHEMA, series: seriesList });
}

/** Keeps the newest MAX_SERIES series (by their last point) and MAX_POINTS_PER_SERIES points each. */
export function boundHistory(history: History): History {
  const last = (s: HistorySeries) => s.points.at(-1)?.date ?? '';
  const series = history.series
    .map((s) => ({ reference: s.reference, points: s.points.slice(-MAX_POINTS_PER_SERIES) }))
    .sort((a, b) => (last(a) < last(b) ? -1 : last(a) > last(b) ? 1 : 0))
    .slice(-MAX_SERIES);
  return { schema: HISTORY_SCHEMA, series };
}

/** The series against the newest reference (the one the last point was measured against). */
export function currentSeries(history: History): HistorySeries | undefined {
  return history.series.at(-1);
}
