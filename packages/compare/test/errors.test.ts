import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, HotpathCompareError } from '../src/errors.js';

describe('error codes', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

  it.each(Object.keys(ERROR_CODES))('%s is documented in the README error table', (code) => {
    expect(readme).toMatch(new RegExp(`^\\| \`${code}\` \\|`, 'm'));
  });

  it('carries code, side and cause', () => {
    const cause = new Error('inner');
    const err = new HotpathCompareError('HP_COMPARE_SERVER_EXITED', 'base server exited', {
      cause,
      side: 'base',
    });
    expect(err.code).toBe('HP_COMPARE_SERVER_EXITED');
    expect(err.side).toBe('base');
    expect(err.cause).toBe(cause);
    expect(err).toBeInstanceOf(Error);
  });
});
