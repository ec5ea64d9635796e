import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, HotpathTicksError } from '../src/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('error codes', () => {
  it.each(Object.keys(ERROR_CODES))('%s is documented in the README error table', (code) => {
    expect(readme).toMatch(new RegExp(`^\\| \`${code}\` \\|`, 'm'));
  });

  it('every documented code exists', () => {
    const documented = [...readme.matchAll(/^\| `(HP_TICKS_[A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('errors carry their code, a default message and a cause', () => {
    const cause = new Error('disk');
    const error = new HotpathTicksError('HP_TICKS_READ_FAILED', undefined, { cause });
    expect(error.code).toBe('HP_TICKS_READ_FAILED');
    expect(error.message).toBe(ERROR_CODES.HP_TICKS_READ_FAILED);
    expect(error.cause).toBe(cause);
    expect(error).toBeInstanceOf(Error);
  });
});
