import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatTail, HotpathCompareError } from '../errors.js';
import {
  checkConfigPath,
  isModuleConfig,
  type LoadedConfig,
  parseConfigJson,
  readJsonConfig,
} from '../settings/config-file.js';
import { runCommand } from './process-group.js';

/** The longest a JavaScript config may take to produce its object. */
export const CONFIG_CHILD_TIMEOUT_MS = 60_000;

/**
 * Runs in the child (`node --input-type=module -e`): imports the config, awaits a function
 * default export, and writes the object as JSON to argv[2]. A value JSON cannot carry (function,
 * symbol, bigint, undefined in an array, a class instance other than Date) fails naming its path,
 * rather than being dropped.
 */
const CHILD_SCRIPT = `
import { writeFileSync } from 'node:fs';
const [url, out] = process.argv.slice(1);
const mod = await import(url);
let config = mod.default;
if (typeof config === 'function') config = await config();
if (config === undefined) {
  console.error('no default export: expected export default { … }');
  process.exit(3);
}
const check = (value, path) => {
  const type = typeof value;
  if (value === null || type === 'string' || type === 'boolean') return;
  if (type === 'number') {
    if (!Number.isFinite(value)) throw new Error(path + ' is ' + value + ', not a JSON number');
    return;
  }
  if (type !== 'object') throw new Error(path + ' is a ' + type + ', not a JSON value');
  if (Array.isArray(value)) {
    value.forEach((item, i) => check(item, path + '[' + i + ']'));
    return;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null)
    throw new Error(path + ' is a ' + (value.constructor?.name ?? 'object') + ', not a plain object');
  for (const [key, item] of Object.entries(value)) if (item !== undefined) check(item, path + '.' + key);
};
check(config, 'the default export');
writeFileSync(out, JSON.stringify(config));
`;

const shellQuote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

export interface ConfigChildOptions {
  /** The child's whole environment (the Action: the allowlist). */
  env: NodeJS.ProcessEnv;
  /** Working directory of the child (default: the config file's directory). */
  cwd?: string;
  /** Stops the child and everything it started. */
  signal?: AbortSignal;
  /** What the config prints (stdout and stderr), as it comes. */
  onOutput?: (chunk: Buffer) => void;
  timeoutMs?: number;
}

/**
 * Loads a config file without running its code in this process: JSON is read here; a JavaScript
 * config (`.mjs`, `.js`, `.cjs`) is evaluated by a child `node` in its own process group with
 * `options.env` only, and only the plain JSON object it produces comes back (validation happens
 * in resolveSettings, as for any config). Everything the child started is stopped before this
 * resolves. For a caller where the config comes from untrusted code (the Action's measure job).
 */
export async function loadConfigInChild(path: string, options: ConfigChildOptions): Promise<LoadedConfig> {
  const full = checkConfigPath(path);
  if (!isModuleConfig(full)) return readJsonConfig(full);
  const temp = mkdtempSync(join(tmpdir(), 'hotpath-config-'));
  try {
    const out = join(temp, 'config.json');
    const command = [
      'exec',
      shellQuote(process.execPath),
      '--input-type=module',
      '-e',
      shellQuote(CHILD_SCRIPT),
      shellQuote(pathToFileURL(full).href),
      shellQuote(out),
    ].join(' ');
    const timeoutMs = options.timeoutMs ?? CONFIG_CHILD_TIMEOUT_MS;
    const { exit, output } = await runCommand(command, {
      cwd: options.cwd ?? dirname(full),
      env: options.env,
      onOutput: options.onOutput,
      signal: options.signal,
      timeoutMs,
    });
    if (options.signal?.aborted)
      throw new HotpathCompareError(
        'HP_COMPARE_ABORTED',
        `loading ${full} was aborted (${String(options.signal.reason?.message ?? options.signal.reason)})`,
      );
    if (exit.code !== 0) {
      const how =
        exit.code === null
          ? `did not finish within ${Math.round(timeoutMs / 1000)} s`
          : `exited with code ${exit.code}`;
      throw new HotpathCompareError(
        'HP_COMPARE_CONFIG',
        `cannot load ${full}: evaluating it ${how}. Last output lines:\n${formatTail(output.last(20))}`,
      );
    }
    let text: string;
    try {
      text = readFileSync(out, 'utf8');
    } catch (err) {
      throw new HotpathCompareError(
        'HP_COMPARE_CONFIG',
        `cannot load ${full}: evaluating it wrote no config object (${(err as Error).message})`,
        { cause: err },
      );
    }
    return { path: full, dir: dirname(full), config: parseConfigJson(full, text) };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}
