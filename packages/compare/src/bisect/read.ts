// A bisect search as another job reads it: the Action's bisect-record job takes the search a
// bisect-measure job wrote (where the repository's code ran) from an artifact. Untrusted data:
// read without following links, bounded, and checked field by field; only the fields the record
// job uses survive (commit ids as 40 hex digits, numbers finite, text bounded — and still
// escaped wherever it is shown).
import { z } from 'zod';
import { HotpathCompareError } from '../errors.js';
import { printable } from '../printable.js';
import { parseJson } from '../shard/read-file.js';
import { BISECT_SCHEMA } from './model.js';
import { MAX_RANGE } from './range.js';

/** The search's file in a bisect-measure job's results folder (its out folder: report.json). */
export const BISECT_FILE = 'report.json';

const sha = z.string().regex(/^[0-9a-f]{40}$/, 'expected a commit id (40 hex digits)');
const text = (max: number) => z.string().max(max);
const count = z.number().int().min(0).max(1_000_000);

const changeSchema = z
  .object({
    scenario: text(200),
    metric: text(60),
    unit: text(20),
    better: z.enum(['higher', 'lower']),
    change: z.number().finite(),
    ci: z.tuple([z.number().finite(), z.number().finite()]).nullable(),
  })
  .nullable();

const summarySchema = z.object({
  schema: z.literal(BISECT_SCHEMA),
  conclusion: z.enum(['culprit', 'no-culprit', 'range']),
  culprit: z.object({ sha, subject: text(200), change: changeSchema, pairs: count }).nullable(),
  range: z.object({ from: sha, to: sha, commits: z.array(sha).max(MAX_RANGE) }),
  commits: z.array(z.object({ sha, subject: text(200) })).max(MAX_RANGE + 1),
  why: text(2000),
  threshold: z.number().finite().min(0).max(10_000),
  comparisons: count,
  pairs: count,
  seconds: z.number().finite().min(0).max(10_000_000),
});

/** What a bisect-record job takes from a search: validated, nothing else kept. */
export type BisectSummary = z.infer<typeof summarySchema>;

/** Reads and checks a search file (hotpath-bisect/1) that another job wrote. */
export function readBisectSearch(path: string): BisectSummary {
  const data = parseJson(path, 'bisect search');
  const parsed = summarySchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.map(String).join('.') || '(top level)';
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `bisect search ${printable(path)}: ${printable(where)}: ${printable(issue?.message ?? 'invalid')} (expected the hotpath-bisect/1 file a bisect-measure job writes)`,
    );
  }
  const s = parsed.data;
  if (s.culprit && s.conclusion !== 'culprit')
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `bisect search ${printable(path)}: a culprit with conclusion ${s.conclusion} (expected culprit)`,
    );
  if (s.conclusion === 'culprit' && !s.commits.some((c) => c.sha === s.culprit?.sha))
    throw new HotpathCompareError(
      'HP_COMPARE_RESULTS',
      `bisect search ${printable(path)}: the culprit is not one of the searched commits`,
    );
  return s;
}
