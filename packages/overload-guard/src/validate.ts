import type { z } from 'zod';
import { describeValue, HotpathGuardError, invalidOption } from './errors.js';

/**
 * Parses `input` with `schema`; on failure throws HP_GUARD_INVALID_OPTION naming the first bad
 * option, its value and what was expected.
 */
export function parseOptions<T extends z.ZodType>(schema: T, input: unknown, owner: string): z.output<T> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue === undefined) {
    throw new HotpathGuardError(
      'HP_GUARD_INVALID_OPTION',
      `${owner}: invalid options ${describeValue(input)}`,
    );
  }
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length ? ` in ${issue.path.map(String).join('.')}` : '';
    throw new HotpathGuardError(
      'HP_GUARD_INVALID_OPTION',
      `${owner}: unknown option ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}${where}: expected only the documented option names`,
    );
  }
  const path = issue.path.map(String).join('.');
  let value: unknown = input;
  for (const key of issue.path) {
    value =
      value != null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  }
  throw invalidOption(owner, path === '' ? 'options' : path, value, issue.message);
}
