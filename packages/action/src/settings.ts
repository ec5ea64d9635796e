import { resolve } from 'node:path';
import * as core from '@actions/core';
import { type ReportRules, resolveSettings, type Settings } from '@hotpath/compare';
import {
  allowlistedEnvironment,
  isModuleConfig,
  isReporterKey,
  loadConfigInChild,
  readJsonConfig,
} from '@hotpath/compare/internal';
import { HotpathActionError } from './errors.js';
import type { ActionOptions } from './inputs.js';
import { settingInputs } from './inputs.js';
import { logSafe, safeLines, withCommandsStopped } from './log.js';

/** Every setting input that is set (core.getInput: INPUT_<NAME>), keyed by setting key. */
function inputValues(): { key: string; input: string; value: string }[] {
  const found: { key: string; input: string; value: string }[] = [];
  for (const [input, key] of settingInputs()) {
    const value = core.getInput(input);
    if (value !== '') found.push({ key, input, value });
  }
  return found;
}

/**
 * The config file of modes measure and all. A JavaScript config is code from the pull request:
 * it runs in a child `node` with the allowlisted environment (no token, input, ACTIONS_* or
 * GITHUB_* command file), its output goes to the log line by line through logSafe with workflow
 * commands stopped, and only the plain JSON object it produces comes back.
 */
async function measureConfig(workspace: string, options: ActionOptions, signal: AbortSignal) {
  if (!options.config) return undefined;
  const path = resolve(workspace, options.config);
  if (!isModuleConfig(path)) return readJsonConfig(path);
  const write = (line: string) => process.stdout.write(`${line}\n`);
  write(`hotpath: evaluating ${logSafe(options.config)} in a child process with the allowlisted environment`);
  return withCommandsStopped(write, async () => {
    const lines = safeLines((line) => write(`[config] ${line}`));
    try {
      return await loadConfigInChild(path, {
        env: allowlistedEnvironment(process.env),
        cwd: workspace,
        signal,
        onOutput: (chunk) => lines.push(chunk),
      });
    } finally {
      lines.end();
    }
  });
}

/** modes measure and all: the inputs over the config file the `config` input names. */
export async function measureSettings(
  workspace: string,
  options: ActionOptions,
  signal: AbortSignal,
): Promise<Settings> {
  const loaded = await measureConfig(workspace, options, signal);
  return resolveSettings({
    config: loaded?.config,
    configName: loaded ? `config file ${options.config}` : undefined,
    overrides: Object.fromEntries(inputValues().map(({ key, value }) => [key, value])),
    overridesSource: 'input',
  });
}

/**
 * mode report: what the report job decides (the verdict's rules and where files go), from its
 * config file and inputs; everything else comes from the results. An input that describes the
 * measurement is ignored with a warning (report jobs often copy the measure job's inputs).
 */
export function reportRules(workspace: string, options: ActionOptions): ReportRules {
  if (options.config && isModuleConfig(options.config))
    throw new HotpathActionError(
      'HP_ACTION_CONFIG_NOT_JSON',
      `config ${JSON.stringify(options.config)} is JavaScript, and mode report reads JSON only: the report job holds a write token and runs no code of the repository. Give it a JSON config (hotpath.config.json) with the report settings, or no config`,
    );
  const loaded = options.config ? readJsonConfig(resolve(workspace, options.config)) : undefined;
  const overrides: Record<string, string> = {};
  const ignored: string[] = [];
  for (const { key, input, value } of inputValues()) {
    if (isReporterKey(key)) overrides[key] = value;
    else ignored.push(input);
  }
  if (ignored.length > 0)
    core.warning(
      `hotpath: mode report takes the measurement (${logSafe(ignored.join(', '))}) from the results; those inputs are ignored here`,
    );
  return {
    config: loaded?.config as Record<string, unknown> | undefined,
    configName: loaded ? `config file ${options.config}` : undefined,
    overrides,
    overridesSource: 'input',
  };
}
