import {
  actionDefault,
  checkFrontDoorValue,
  FRONT_DOOR_OPTIONS,
  type FrontDoorName,
  frontDoorOption,
  frontDoorText,
  inputOf,
  parseDuration,
  SETTINGS,
  type SettingSpec,
} from '@hotpath/compare/internal';
import { z } from 'zod';
import { HotpathActionError } from './errors.js';

/** A yes/no input: true, false, 1, 0, yes, no (any case), or empty for false. */
const flag = (name: string) =>
  z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .refine((v) => ['', 'true', 'false', '1', '0', 'yes', 'no'].includes(v), {
      message: `expected true or false`,
    })
    .transform((v) => v === 'true' || v === '1' || v === 'yes')
    .describe(name);

/**
 * An input the CLI takes too (config, results, shard, reference): its text, default and check are
 * declared once in @hotpath/compare (settings/front-door.ts); readActionOptions makes its check.
 */
const frontDoorInput = (name: FrontDoorName) => ({
  text: frontDoorText(frontDoorOption(name), 'action'),
  default: `'${actionDefault(name).replace(/'/g, "''")}'`,
  schema: z.string(),
});

/**
 * The Action's inputs beside the settings: its own (the GitHub edge) and those it shares with the
 * CLI (frontDoorInput). Every other input comes from @hotpath/compare's settings table; action.yml
 * is rendered from both and a test compares it.
 */
export const ACTION_INPUTS = {
  mode: {
    text: "all (measure and report in one step), measure (run base and head, write raw results; no GitHub API call, no token needed), report (merge results, comment, summary, outputs; runs no code from the pull request), drift-measure (on push or schedule: the branch head against a fixed reference, raw results written; no GitHub API call, no token needed), drift-record (the drift-measure job's results appended to the history branch, trend in the summary, one drift issue; runs no code of the repository), drift (both in one step, next to the token: warns when one is set), bisect-measure (the commit between good and bad that made the change, searched by paired comparisons, the search written to results; no GitHub API call, no token needed) or bisect-record (the bisect-measure job's search in the summary and, with the commit's pull request, on the open drift issue; runs no code of the repository).",
    default: "'all'",
    schema: z.enum([
      'all',
      'measure',
      'report',
      'drift-measure',
      'drift-record',
      'drift',
      'bisect-measure',
      'bisect-record',
    ]),
  },
  results: frontDoorInput('results'),
  shard: frontDoorInput('shard'),
  config: frontDoorInput('config'),
  comment: {
    text: 'When to write the sticky comment: always, on-change (a regression, an inconclusive run or an improvement, or an update of an earlier comment), on-regression, or never.',
    default: "'always'",
    schema: z.enum(['always', 'on-change', 'on-regression', 'never']),
  },
  'comment-key': {
    text: 'Separates the sticky comments of several workflows or matrices on one pull request.',
    default: "''",
    schema: z.string().regex(/^[\w.-]{0,100}$/, 'expected letters, digits, ".", "_" or "-" (at most 100)'),
  },
  'allow-pull-request-target': {
    text: 'Measure on pull_request_target (runs the PR code next to a write token and secrets). Refused unless true.',
    default: "'false'",
    schema: flag('allow-pull-request-target'),
  },
  'upload-artifact': {
    text: 'modes all and report: upload report.html, the report, folded stacks and flame graphs as a workflow artifact, linked from the comment.',
    default: "'true'",
    schema: flag('upload-artifact'),
  },
  reference: frontDoorInput('reference'),
  'history-branch': {
    text: 'modes drift-record and drift: the branch the history is kept on (history.json; created on the first run). Needs contents: write.',
    default: "'hotpath-history'",
    schema: z
      .string()
      .regex(/^\w[\w./-]{0,99}$/, 'expected a branch name (letters, digits, ".", "_", "/", "-")'),
  },
  'drift-issue': {
    text: 'modes drift-record and drift: open one issue when a drift beyond the threshold is confirmed (the same metric beyond it after 2 of the last 3 runs, or surely beyond it after one), keep it up to date, and close it when the drift is back within. Needs issues: write.',
    default: "'true'",
    schema: flag('drift-issue'),
  },
  good: {
    text: "mode bisect-measure: a commit without the change (older), on bad's first-parent history — a drift-record job's drift-step-good output.",
    default: "''",
    schema: gitRef('good'),
  },
  bad: {
    text: "mode bisect-measure: a commit with the change (newer) — a drift-record job's drift-step-bad output.",
    default: "''",
    schema: gitRef('bad'),
  },
  'bisect-budget': {
    text: "mode bisect-measure: the whole search's time budget (each comparison keeps max-time); the search ends on a range when it is spent. Seconds (or 500ms, 2m).",
    default: "'30m'",
    schema: z.string().refine((v) => {
      const seconds = parseDuration(v);
      return seconds !== undefined && seconds >= 60 && seconds <= 6 * 3600;
    }, 'expected a duration from 1m to 6h (e.g. 30m, 1800)'),
  },
  'github-token': {
    text: "Token used to write the pull-request comment (mode report and all), and in modes drift-record and drift to push the history branch and write the drift issue. Set it to '' in a measure or drift-measure job: it calls no API, and the pull request's code could read the token from the Action's environment.",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub expression, written into action.yml as is
    default: '${{ github.token }}',
    schema: z.string(),
  },
} as const satisfies Record<string, { text: string; default: string; schema: z.ZodType }>;

/** A commit id, tag or branch name: no option (leading dash), no spaces or control characters. */
function gitRef(name: string) {
  return z
    .string()
    .regex(
      /^$|^[\w][\w./^~@{}-]{0,199}$/,
      `expected a commit, tag or branch for ${name} (letters, digits, ".", "/", "-", "_")`,
    );
}

/** Input name → setting key, for every setting the Action takes as an input. */
export function settingInputs(): [input: string, key: string][] {
  return (SETTINGS as readonly SettingSpec[]).flatMap((spec) => {
    const input = inputOf(spec);
    return input ? [[input, spec.key] as [string, string]] : [];
  });
}

/** Every input action.yml must declare. */
export function allInputNames(): string[] {
  return [...settingInputs().map(([input]) => input), ...Object.keys(ACTION_INPUTS)];
}

const actionOptions = z.object(
  Object.fromEntries(Object.entries(ACTION_INPUTS).map(([name, spec]) => [name, spec.schema])) as {
    [K in keyof typeof ACTION_INPUTS]: (typeof ACTION_INPUTS)[K]['schema'];
  },
);

export type ActionOptions = z.infer<typeof actionOptions>;

/** An input's default as the Action reads it: action.yml's quoted literal, or '' for an expression. */
const defaultOf = (yaml: string) => /^'(.*)'$/.exec(yaml)?.[1] ?? '';

/** The Action's own inputs, validated once; `read` is core.getInput. */
export function readActionOptions(read: (name: string) => string): ActionOptions {
  const raw: Record<string, string> = {};
  for (const [name, spec] of Object.entries(ACTION_INPUTS))
    raw[name] = read(name).trim() || defaultOf(spec.default);
  // The values the CLI takes as flags too: the same check, the same error (HP_COMPARE_INVALID_SETTING).
  for (const { name } of FRONT_DOOR_OPTIONS) checkFrontDoorValue(name, raw[name] ?? '');
  const parsed = actionOptions.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (!issue)
      throw new HotpathActionError('HP_ACTION_INVALID_INPUT', `invalid inputs: ${parsed.error.message}`);
    const name = String(issue.path[0]);
    throw new HotpathActionError(
      'HP_ACTION_INVALID_INPUT',
      `invalid input "${name}": ${issue.code === 'invalid_value' ? `expected one of ${(issue.values as unknown[]).join(', ')}` : issue.message}, got ${JSON.stringify(raw[name])}`,
    );
  }
  return parsed.data;
}
