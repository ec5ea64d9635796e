// The shape of one setting in the settings table (settings/table.ts): its kind, default, unit,
// flag, Action input and help text.

export type SettingKind =
  | 'command'
  | 'text'
  | 'ref'
  | 'path'
  | 'url'
  | 'method'
  | 'integer'
  | 'integer-or-auto'
  | 'number'
  | 'rate'
  | 'slo'
  | 'json'
  | 'duration'
  | 'percent'
  | 'boolean'
  | 'enum'
  | 'headers'
  | 'list'
  | 'choices';

export interface SettingSpec {
  /** Name in the API, the config file and the report (camelCase). */
  readonly key: string;
  readonly kind: SettingKind;
  /** Default value (in the setting's unit); undefined = unset. */
  readonly default?: string | number | boolean | readonly string[];
  readonly unit?: 's' | '%' | 'points' | 'req/s' | 'B/req';
  readonly description: string;
  /** Placeholder in --help. */
  readonly arg?: string;
  /** Long CLI flag; false = not a CLI flag. Default: the key in kebab-case. */
  readonly flag?: string | false;
  readonly short?: string;
  /** Action input name; false = not an Action input. Default: the flag. */
  readonly input?: string | false;
  /** Read only when two sides are compared: `hotpath profile` (one server) takes no such flag. */
  readonly comparisonOnly?: boolean;
  /** Can be set per scenario (then the top-level value is the scenarios' default). */
  readonly scenario?: boolean;
  readonly min?: number;
  /** The minimum itself is excluded (> min). */
  readonly minExclusive?: boolean;
  readonly max?: number;
  readonly values?: readonly string[];
  /** Help section. */
  readonly group: 'sides' | 'load' | 'verdict';
}
