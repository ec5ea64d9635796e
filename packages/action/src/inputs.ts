import { inputOf, SETTINGS, type SettingSpec } from '@hotpath/compare';

/**
 * Inputs that only the Action has (the GitHub edge). Every other input comes from
 * @hotpath/compare's settings table; a test checks action.yml against both lists.
 */
export const ACTION_INPUTS = {
  config:
    'Path of a hotpath config file (hotpath.config.json/.mjs/.js) in the repository, with scenarios; inputs override its values.',
  'upload-artifact': 'Upload the report, folded stacks and flame graphs as a workflow artifact.',
  'github-token': 'Token used to write the pull-request comment.',
} as const;

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
