import { resolve } from 'node:path';
import * as core from '@actions/core';
import { loadConfig, type ReportRules, resolveSettings, type Settings } from '@hotpath/compare';
import { isReporterKey } from '@hotpath/compare/internal';
import type { ActionOptions } from './inputs.js';
import { settingInputs } from './inputs.js';
import { logSafe } from './log.js';

/** Every setting input that is set (core.getInput: INPUT_<NAME>), keyed by setting key. */
function inputValues(): { key: string; input: string; value: string }[] {
  const found: { key: string; input: string; value: string }[] = [];
  for (const [input, key] of settingInputs()) {
    const value = core.getInput(input);
    if (value !== '') found.push({ key, input, value });
  }
  return found;
}

/** modes measure and all: the inputs over the config file the `config` input names. */
export async function measureSettings(workspace: string, options: ActionOptions): Promise<Settings> {
  const loaded = options.config ? await loadConfig(resolve(workspace, options.config)) : undefined;
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
export async function reportRules(workspace: string, options: ActionOptions): Promise<ReportRules> {
  const loaded = options.config ? await loadConfig(resolve(workspace, options.config)) : undefined;
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
