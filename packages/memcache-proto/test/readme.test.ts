import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/index.js';

describe('README', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  it.each(Object.keys(ERROR_CODES))('documents error code %s', (code) => {
    expect(readme).toContain(`\`${code}\``);
  });
  it('has a Security section', () => {
    expect(readme).toMatch(/^## Security$/m);
  });
});
