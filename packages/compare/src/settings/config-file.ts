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

/**
 * Loads a config file: JSON, or an ES module (`.mjs`, `.js`) whose default export is the object
 * (or a function returning it, possibly async). Validation happens in resolveSettings.
 */
export async function loadConfig(path: string): Promise<LoadedConfig> {
  const full = resolve(path);
  if (!existsSync(full))
    throw new HotpathCompareError('HP_COMPARE_CONFIG', `config file ${JSON.stringify(path)} does not exist`);
  let config: unknown;
  if (full.endsWith('.json')) {
    let text: string;
    try {
      text = readFileSync(full, 'utf8');
    } catch (err) {
      throw new HotpathCompareError('HP_COMPARE_CONFIG', `cannot read ${full}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    try {
      config = JSON.parse(text);
    } catch (err) {
      throw new HotpathCompareError(
        'HP_COMPARE_CONFIG',
        `${full} is not valid JSON: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  } else if (/\.(mjs|js|cjs)$/.test(full)) {
    let mod: { default?: unknown };
    try {
      mod = await import(pathToFileURL(full).href);
    } catch (err) {
      throw new HotpathCompareError('HP_COMPARE_CONFIG', `cannot load ${full}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    config = mod.default;
    if (typeof config === 'function') config = await (config as () => unknown)();
    if (config === undefined)
      throw new HotpathCompareError(
        'HP_COMPARE_CONFIG',
        `${full} has no default export: expected export default { … }`,
      );
  } else {
    throw new HotpathCompareError(
      'HP_COMPARE_CONFIG',
      `config file ${JSON.stringify(path)}: expected a .json, .mjs or .js file`,
    );
  }
  return { path: full, dir: dirname(full), config };
}
