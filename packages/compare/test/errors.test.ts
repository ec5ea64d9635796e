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

  it("has its class name, the code's default message when given none, and no cause when given none", () => {
    const err = new HotpathCompareError('HP_COMPARE_GIT');
    expect(err).toBeInstanceOf(HotpathCompareError);
    expect(err.name).toBe('HotpathCompareError');
    expect(err.constructor.name).toBe('HotpathCompareError');
    expect(err.message).toBe(ERROR_CODES.HP_COMPARE_GIT);
    expect(err.side).toBeUndefined();
    expect(Object.hasOwn(err, 'cause')).toBe(false);
    expect(String(err)).toBe(`HotpathCompareError: ${ERROR_CODES.HP_COMPARE_GIT}`);
  });
});
