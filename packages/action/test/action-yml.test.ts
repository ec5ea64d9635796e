import { readFileSync } from 'node:fs';
import { inputOf, SETTINGS, type SettingSpec } from '@hotpath/compare/internal';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { renderActionYml } from '../scripts/action-yml.mjs';
import { allInputNames } from '../src/inputs.js';

const committed = readFileSync(new URL('../../../action.yml', import.meta.url), 'utf8');

describe('action.yml agrees with the settings table', () => {
  it('is exactly what the table renders (run pnpm --filter @hotpath/action action-yml to update)', () => {
    expect(committed).toBe(renderActionYml());
  });

  it('declares every input the Action reads, and no other', () => {
    const inputs = committed.slice(committed.indexOf('\ninputs:\n'), committed.indexOf('\noutputs:\n'));
    const declared = [...inputs.matchAll(/^ {2}([a-z0-9-]+):$/gm)].map((m) => m[1]);
    expect(declared.sort()).toEqual(allInputNames().sort());
  });

  it('states each default in the table unit, in the description: a setting input declares none', () => {
    const threshold = (SETTINGS as readonly SettingSpec[]).find((s) => s.key === 'threshold');
    expect(threshold?.unit).toBe('%');
    expect(committed).toMatch(
      / {2}threshold:\n {4}description: '.*Percent\. Unset: the config file''s value, else 5\.'\n {4}default: ''/,
    );
    // GitHub sets INPUT_<NAME> to a declared default for every input a step leaves out, which
    // would override the config file: every setting input's default is empty
    const inputs = committed.slice(committed.indexOf('\ninputs:\n'), committed.indexOf('\noutputs:\n'));
    const settingInputs = (SETTINGS as readonly SettingSpec[]).map((s) => inputOf(s)).filter(Boolean);
    expect(settingInputs.length).toBeGreaterThan(30);
    for (const input of settingInputs)
      expect(inputs, input as string).toMatch(
        new RegExp(`^ {2}${input}:\\n {4}description: .*\\n {4}default: ''$`, 'm'),
      );
  });
});
