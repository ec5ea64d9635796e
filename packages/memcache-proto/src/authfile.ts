import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { HotpathMcError } from './errors.js';

/** The users of an authfile (`user:password` lines), checked in constant time per password. */
export class AuthUsers {
  private readonly users = new Map<string, Buffer>();

  constructor(entries: Iterable<[string, string]>) {
    for (const [user, password] of entries) this.users.set(user, Buffer.from(password, 'latin1'));
  }

  get size(): number {
    return this.users.size;
  }

  check(user: string, password: Buffer): boolean {
    const expected = this.users.get(user);
    if (expected === undefined || expected.length !== password.length) return false;
    return timingSafeEqual(expected, password);
  }
}

/** Parses memcached's authfile format: one `user:password` per line, blank lines ignored. */
export function parseAuthfile(text: string, source = 'authfile'): AuthUsers {
  const entries: [string, string][] = [];
  const lines = text.split(/\r?\n/);
  for (const [i, line] of lines.entries()) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0 || colon === line.length - 1) {
      throw new HotpathMcError(
        'HP_MC_AUTHFILE',
        `${source} line ${i + 1}: expected user:password, got ${JSON.stringify(line.slice(0, 40))}`,
      );
    }
    entries.push([line.slice(0, colon), line.slice(colon + 1)]);
  }
  if (entries.length === 0) throw new HotpathMcError('HP_MC_AUTHFILE', `${source}: no user:password lines`);
  return new AuthUsers(entries);
}

export function readAuthfile(path: string): AuthUsers {
  let text: string;
  try {
    text = readFileSync(path, 'latin1');
  } catch (cause) {
    throw new HotpathMcError('HP_MC_AUTHFILE', `cannot read authfile ${path}`, { cause });
  }
  return parseAuthfile(text, path);
}
