// The options both front doors take that are not settings: which config file, where the raw
// results go, which shard a run is and the drift's reference. Each is declared here once — its
// name (the CLI's --NAME and the Action's input NAME), placeholder, description, value check and
// default — and the CLI (flags, --help) and the Action (inputs, action.yml) are derived from it.
// Where the two doors' defaults differ, the entry states both and why; a test holds them to it.
import { HotpathCompareError } from '../errors.js';

/** Shards of a run: `i/n` with n at most this. */
export const MAX_SHARDS = 256;

/** The doors' defaults where they must differ: each door's, and the reason. */
export interface DoorDefaults {
  /** What the CLI does without the option, in words (it has no value then). */
  readonly cli: string;
  /** The Action input's default value. */
  readonly action: string;
  /** Why the doors cannot share one default. */
  readonly why: string;
}

/** An option both front doors take that is not a setting. */
export interface FrontDoorOption {
  /** The CLI flag (--NAME) and the Action input. */
  readonly name: string;
  /** Placeholder in --help. */
  readonly arg: string;
  /** What the option is, at both doors. */
  readonly description: string;
  /** The default value both doors take; or, where they differ, each door's (see DoorDefaults). */
  readonly default: string | DoorDefaults;
  /** Which commands of the CLI read it, and what else it means there. */
  readonly cli: { readonly commands: string; readonly note?: string };
  /** Which modes of the Action read it, and what else it means there. */
  readonly action: { readonly modes?: string; readonly note?: string };
  /** Checks a given value: throws HP_COMPARE_INVALID_SETTING naming it and what was expected. */
  readonly check?: (text: string) => void;
}

/** Parses `i/n` (1 <= i <= n <= 256); throws HP_COMPARE_INVALID_SETTING naming the value. */
export function parseShardText(text: string): { index: number; total: number } {
  const match = /^\s*(\d{1,3})\s*\/\s*(\d{1,3})\s*$/.exec(text);
  const index = Number(match?.[1]);
  const total = Number(match?.[2]);
  if (!match || index < 1 || total < 1 || index > total || total > MAX_SHARDS) {
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      `invalid shard ${JSON.stringify(text)}: expected i/n with 1 <= i <= n <= ${MAX_SHARDS}, e.g. 1/4`,
    );
  }
  return { index, total };
}

const REFERENCE_GLOB = /^[\w.*?[\]/+-]{1,100}$/;

/**
 * Checks a drift reference's form: `tag:GLOB` with a usable glob, or a ref that is not empty
 * (whether it exists is git's to say). Throws HP_COMPARE_INVALID_SETTING naming the value.
 */
export function checkReference(spec: string): void {
  const value = spec.trim();
  if (value.startsWith('tag:') && !REFERENCE_GLOB.test(value.slice(4)))
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      `invalid reference ${JSON.stringify(spec)}: expected tag:GLOB (e.g. tag:v*) with letters, digits and . _ - / + * ? [ ]`,
    );
  if (value === '')
    throw new HotpathCompareError(
      'HP_COMPARE_INVALID_SETTING',
      'missing reference: expected tag:GLOB (the highest semver tag, e.g. tag:v*) or a ref (e.g. v1.4.0)',
    );
}

/** The front-door options, each declared once for the CLI and the Action. */
export const FRONT_DOOR_OPTIONS = [
  {
    name: 'config',
    arg: 'FILE',
    description:
      'Config file with the scenarios (hotpath.config.json, .mjs or .js); the settings given beside it override its values.',
    default: {
      cli: 'hotpath.config.json, .mjs or .js in the working directory',
      action: '',
      why: 'On a terminal, the config in the folder you run hotpath in is the one you mean. The Action reads a config only when the workflow names it: which file a job reads (and, in modes measure, all and drift, runs) is written in the workflow, not decided by a file turning up in the checkout.',
    },
    cli: { commands: 'compare, profile, drift, bisect' },
    action: {
      note: 'A path in the repository. Modes measure, all and drift evaluate a .mjs/.js config in a child process with the allowlisted environment; mode report reads a JSON config only.',
    },
  },
  {
    name: 'results',
    arg: 'DIR',
    description:
      'Directory of raw results, where a measuring run writes its shard and a report reads every shard found below it (at any depth).',
    default: {
      cli: 'none: no raw results are written',
      action: 'hotpath-results',
      why: "hotpath compare writes raw results only when asked (hotpath report takes its folders as arguments); the Action's mode measure always writes its shard for the report job and mode report always reads some, so the Action names a folder.",
    },
    cli: { commands: 'compare' },
    action: { modes: 'modes measure and report' },
  },
  {
    name: 'shard',
    arg: 'I/N',
    description: 'Which shard this run is, as i/n (e.g. 2/4 in a matrix); each shard runs the full rounds.',
    default: '1/1',
    cli: { commands: 'compare' },
    action: { modes: 'modes measure and all' },
    check: (text) => void parseShardText(text),
  },
  {
    name: 'reference',
    arg: 'REF',
    description:
      'The fixed reference a drift run measures against, tag:GLOB (the highest semver release tag matching it, e.g. tag:v*) or a ref (pinned); a new reference starts a new series.',
    default: {
      cli: 'none: hotpath drift needs it, hotpath history shows the newest series',
      action: 'tag:v*',
      why: 'On the command line the same flag also picks the series hotpath history shows, where no flag means the newest series, so it has no default and hotpath drift asks for it; a drift workflow follows release tags, so the Action measures against the highest v* tag unless told otherwise.',
    },
    cli: { commands: 'drift', note: 'history: which series to show' },
    action: { modes: 'mode drift' },
    check: (text) => checkReference(text),
  },
] as const satisfies readonly FrontDoorOption[];

/** The names of the front-door options: config, results, shard, reference. */
export type FrontDoorName = (typeof FRONT_DOOR_OPTIONS)[number]['name'];

/** One front-door option's declaration. */
export function frontDoorOption(name: FrontDoorName): FrontDoorOption {
  const option = (FRONT_DOOR_OPTIONS as readonly FrontDoorOption[]).find((o) => o.name === name);
  if (!option) throw new Error(`no front-door option ${name}`);
  return option;
}

/**
 * An option's text at one door: which commands or modes read it, what it is, and the door's own
 * note (the CLI adds its default, action.yml states the input's).
 */
export function frontDoorText(option: FrontDoorOption, door: 'cli' | 'action'): string {
  const where = door === 'cli' ? option.cli.commands : option.action.modes;
  const { note } = option[door];
  const what = where
    ? `${where}: ${option.description[0]?.toLowerCase()}${option.description.slice(1)}`
    : option.description;
  return note ? `${what} ${note}` : what;
}

/** The value the CLI takes without the option (undefined: it does without, see DoorDefaults.cli). */
export function cliDefault(name: FrontDoorName): string | undefined {
  const { default: value } = frontDoorOption(name);
  return typeof value === 'string' ? value : undefined;
}

/** The Action input's default ('' = none). */
export function actionDefault(name: FrontDoorName): string {
  const { default: value } = frontDoorOption(name);
  return typeof value === 'string' ? value : value.action;
}

/** Checks a value given at either door; the error is the same text at both. */
export function checkFrontDoorValue(name: FrontDoorName, text: string): void {
  frontDoorOption(name).check?.(text);
}
