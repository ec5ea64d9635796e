import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { functionLabel, type Profile, parseTickLog } from '../src/index.js';
import { defined } from './helpers/defined.js';
import {
  checkSelfTicks,
  checkTotalTicks,
  profileJsWorkload,
  profilePbkdf2Server,
  profProcess,
  readProfProcessText,
  SELF_TICK_SLACK,
  TOTAL_TICK_SLACK,
} from './helpers/prof-run.js';

/**
 * Logs written by each Node found here, compared with that Node's own `--prof-process`: the one
 * running the tests, and node 20/22/24 from HOTPATH_NODE20/22/24 or /tmp/node22, /tmp/node24
 * (`mkdir -p /tmp/node24 && cd /tmp/node24 && npm i node@24`). A Node that is not installed is
 * skipped, by name, in the test list.
 */
const candidates: { name: string; path: string | undefined }[] = [
  { name: 'the running node', path: process.execPath },
  { name: 'node 20', path: process.env.HOTPATH_NODE20 },
  { name: 'node 22', path: process.env.HOTPATH_NODE22 ?? '/tmp/node22/node_modules/.bin/node' },
  { name: 'node 24', path: process.env.HOTPATH_NODE24 ?? '/tmp/node24/node_modules/.bin/node' },
];

const seen = new Map<string, string>();
const nodes = candidates.map(({ name, path }) => {
  if (!path || !existsSync(path)) return { name, path: undefined, version: 'not installed' };
  const real = realpathSync(path);
  const same = seen.get(real);
  if (same) return { name, path: undefined, version: `the same binary as ${same}` };
  seen.set(real, name);
  const version = execFileSync(real, ['--version'], { encoding: 'utf8' }).trim();
  return { name, path: real, version };
});

const dir = mkdtempSync(join(tmpdir(), 'hotpath-versions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function jsSelfTicks(profile: Profile): Map<string, number> {
  const mine = new Map<string, number>();
  for (const fn of profile.functions)
    if (fn.kind === 'js' && fn.self > 0) mine.set(functionLabel(fn), fn.self);
  return mine;
}

async function compare(node: string, log: string): Promise<void> {
  const [profile, text] = await Promise.all([parseTickLog(log), profProcess(log, node)]);
  const reference = readProfProcessText(text);
  const total = checkTotalTicks(profile, reference.total, log, text);
  expect(Math.abs(total.difference), total.summary).toBeLessThanOrEqual(TOTAL_TICK_SLACK);
  expect(reference.js.size).toBeGreaterThan(0);
  const { moved, summary } = checkSelfTicks(jsSelfTicks(profile), reference.js, log, text);
  expect(moved, summary).toBeLessThanOrEqual(SELF_TICK_SLACK);
  expect(profile.warnings.join('\n')).not.toMatch(/unknown tier/);
  for (const fn of profile.functions) for (const tier of fn.tiers ?? []) expect(tier).not.toMatch(/unknown/);
}

describe.each(nodes)('JS self ticks equal --prof-process on a log of $name', ({ path, version }) => {
  it.skipIf(!path)(
    `a JS-heavy script (${version})`,
    async () => {
      const where = join(dir, `${version}-js`);
      mkdirSync(where);
      const node = defined(path, 'a node (the test is skipped without one)');
      await compare(node, await profileJsWorkload(where, node));
    },
    90_000,
  );

  it.skipIf(!path)(
    `a pbkdf2Sync server under load (${version})`,
    async () => {
      const where = join(dir, `${version}-server`);
      mkdirSync(where);
      const node = defined(path, 'a node (the test is skipped without one)');
      await compare(node, await profilePbkdf2Server(where, 2, [], node));
    },
    90_000,
  );
});
