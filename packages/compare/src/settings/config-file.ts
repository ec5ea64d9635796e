import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HotpathCompareError } from '../errors.js';

/** Names looked for in the working directory, in this order. */
export const CONFIG_NAMES = ['hotpath.config.json', 'hotpath.config.mjs', 'hotpath.config.js'] as const;

export interface LoadedConfig {
  path: string;
  /** Directory of the file: relative paths in it (cwd, out) resolve against it. */
  dir: string;
  config: unknown;
}

/** Finds the config file in `dir` (undefined when there is none). */
export function findConfig(dir: string): string | undefined {
  for (const name of CONFIG_NAMES) {
    const path = resolve(dir, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}

/** A JavaScript config (`.mjs`, `.js`, `.cjs`): code, where a JSON config is data. */
export const isModuleConfig = (path: string): boolean => /\.(mjs|js|cjs)$/.test(path);

/** The config file's absolute path, once it exists and is JSON or JavaScript. */
export function checkConfigPath(path: string): string {
  const full = resolve(path);
  if (!existsSync(full))
    throw new HotpathCompareError('HP_COMPARE_CONFIG', `config file ${JSON.stringify(path)} does not exist`);
  if (!full.endsWith('.json') && !isModuleConfig(full))
    throw new HotpathCompareError(
      'HP_COMPARE_CONFIG',
      `config file ${JSON.stringify(path)}: expected a .json, .mjs or .js file`,
    );
  return full;
}

/** Reads a JSON config; never runs code (a JavaScript config is refused, naming the file). */
export function readJsonConfig(path: string): LoadedConfig {
  const full = checkConfigPath(path);
  if (isModuleConfig(full))
    throw new HotpathCompareError(
      'HP_COMPARE_CONFIG',
      `${full} is JavaScript, and only a JSON config is read here: write it as hotpath.config.json`,
    );
  let text: string;
  try {
    text = readFileSync(full, 'utf8');
  } catch (err) {
    throw new HotpathCompareError('HP_COMPARE_CONFIG', `cannot read ${full}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return { path: full, dir: dirname(full), config: parseConfigJson(full, text) };
}

/** The JSON text of config `full` (a file, or what a JavaScript config produced), parsed. */
export function parseConfigJson(full: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HotpathCompareError(
      'HP_COMPARE_CONFIG',
      `${full} is not valid JSON: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}

/**
 * Loads a config file: JSON, or an ES module (`.mjs`, `.js`) whose default export is the object
 * (or a function returning it, possibly async), imported **in this process** with its whole
 * environment: for the CLI, where the config is the user's own code. Where the config may come
 * from someone else (the Action measuring a pull request), use loadConfigInChild. Validation
 * happens in resolveSettings.
 */
export async function loadConfig(path: string): Promise<LoadedConfig> {
  const full = checkConfigPath(path);
  if (!isModuleConfig(full)) return readJsonConfig(full);
  let mod: { default?: unknown };
  try {
    mod = await import(pathToFileURL(full).href);
  } catch (err) {
    throw new HotpathCompareError('HP_COMPARE_CONFIG', `cannot load ${full}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  let config = mod.default;
  if (typeof config === 'function') config = await (config as () => unknown)();
  if (config === undefined)
    throw new HotpathCompareError(
      'HP_COMPARE_CONFIG',
      `${full} has no default export: expected export default { … }`,
    );
  return { path: full, dir: dirname(full), config };
}
