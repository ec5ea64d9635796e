import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  installEnvironment,
  installV8Profiler,
  V8_PROFILER_LOCK_DIR,
  V8_PROFILER_VERSION,
} from '../src/v8-profiler.js';

// The profiler install: a pinned version whose every package is checked against the shipped
// lockfile's integrity, run by `npm ci` with an environment that holds no token. An `npm` first
// on PATH records what it was given; the real install (node-gyp compiles the addon, minutes) runs
// with HOTPATH_V8_PROFILER_REAL_INSTALL=1.

const root = mkdtempSync(join(tmpdir(), 'hotpath-v8-profiler-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const lock = JSON.parse(readFileSync(join(V8_PROFILER_LOCK_DIR, 'package-lock.json'), 'utf8')) as {
  lockfileVersion: number;
  packages: Record<
    string,
    {
      version?: string;
      integrity?: string;
      resolved?: string;
      hasInstallScript?: boolean;
      dependencies?: object;
    }
  >;
};
const manifest = JSON.parse(readFileSync(join(V8_PROFILER_LOCK_DIR, 'package.json'), 'utf8'));

/** A job's environment: the tokens the runner and the workflow put there, and ordinary names. */
const JOB_ENV: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  LANG: 'C.UTF-8',
  CI: 'true',
  HTTPS_PROXY: 'http://proxy.invalid:3128',
  NODE_EXTRA_CA_CERTS: '/etc/ssl/extra.pem',
  GITHUB_TOKEN: 'ghs_job_token',
  'INPUT_GITHUB-TOKEN': 'ghs_input_token',
  GH_TOKEN: 'ghs_gh_token',
  ACTIONS_RUNTIME_TOKEN: 'runtime-token',
  ACTIONS_RUNTIME_URL: 'https://runtime.invalid/',
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'id-token-request-token',
  ACTIONS_ID_TOKEN_REQUEST_URL: 'https://id-token.invalid/',
  ACTIONS_CACHE_URL: 'https://cache.invalid/',
  NPM_TOKEN: 'npm_secret',
  NODE_AUTH_TOKEN: 'npm_auth_secret',
  npm_config__authToken: 'npm_config_secret',
  GITHUB_EVENT_PATH: '/runner/event.json',
  GITHUB_OUTPUT: '/runner/output',
  GITHUB_ENV: '/runner/env',
  RUNNER_TEMP: '/runner/temp',
  DEPLOY_KEY_SECRET: 'secret',
};
const SECRET_VALUES = Object.entries(JOB_ENV)
  .filter(([name]) => /TOKEN|SECRET|_auth|^ACTIONS_|^GITHUB_|^INPUT_|^RUNNER_TEMP$/i.test(name))
  .map(([, value]) => value);

/** An `npm` that records its arguments, folder, lockfile and environment, then "installs". */
function fakeNpm(
  name: string,
  body = 'mkdir -p node_modules/v8-profiler-next',
): { bin: string; seen: string } {
  const bin = join(root, name, 'bin');
  const seen = join(root, name, 'seen');
  mkdirSync(bin, { recursive: true });
  mkdirSync(seen, { recursive: true });
  writeFileSync(
    join(bin, 'npm'),
    [
      '#!/bin/sh',
      `printf '%s\\n' "$@" > '${seen}/argv'`,
      `pwd > '${seen}/cwd'`,
      `env > '${seen}/env'`,
      `cp package.json package-lock.json '${seen}/' 2>/dev/null`,
      body,
      '',
    ].join('\n'),
  );
  chmodSync(join(bin, 'npm'), 0o755);
  return { bin, seen };
}

const never = new AbortController().signal;

describe('the shipped lockfile', () => {
  it('pins V8_PROFILER_VERSION exactly, in package.json and in the lockfile (lockfileVersion 3)', () => {
    expect(manifest.dependencies).toEqual({ 'v8-profiler-next': V8_PROFILER_VERSION });
    expect(manifest.allowScripts).toEqual({ 'v8-profiler-next': true });
    expect(lock.lockfileVersion).toBe(3);
    expect(lock.packages['']?.dependencies).toEqual({ 'v8-profiler-next': V8_PROFILER_VERSION });
    expect(lock.packages['node_modules/v8-profiler-next']?.version).toBe(V8_PROFILER_VERSION);
  });

  it('gives every package a version and a sha512 integrity, and no resolved URL', () => {
    const entries = Object.entries(lock.packages).filter(([path]) => path !== '');
    expect(entries.length).toBeGreaterThan(50);
    for (const [path, entry] of entries) {
      expect(entry.version, path).toMatch(/^\d+\.\d+\.\d+/);
      expect(entry.integrity, path).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
      expect(entry, path).not.toHaveProperty('resolved');
    }
    expect(readFileSync(join(V8_PROFILER_LOCK_DIR, 'package-lock.json'), 'utf8')).not.toMatch(/"resolved"/);
  });

  it('has one package with an install script: v8-profiler-next itself', () => {
    const scripted = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => path);
    expect(scripted).toEqual(['node_modules/v8-profiler-next']);
  });
});

describe('installV8Profiler', () => {
  it('runs npm ci in the prefix on the shipped lockfile, with no token in its environment', async () => {
    const { bin, seen } = fakeNpm('ci');
    const dir = join(root, 'ci', 'prefix');
    const warnings: string[] = [];
    const path = await installV8Profiler(
      dir,
      { ...JOB_ENV, PATH: `${bin}:${JOB_ENV.PATH}` },
      warnings,
      never,
    );

    expect(path).toBe(join(dir, 'node_modules', 'v8-profiler-next'));
    expect(warnings).toEqual([]);
    expect(readFileSync(join(seen, 'argv'), 'utf8').trim().split('\n')).toEqual([
      'ci',
      '--no-audit',
      '--no-fund',
    ]);
    expect(readFileSync(join(seen, 'cwd'), 'utf8').trim()).toBe(dir);
    // npm saw exactly the shipped files
    for (const file of ['package.json', 'package-lock.json'])
      expect(readFileSync(join(seen, file), 'utf8')).toBe(
        readFileSync(join(V8_PROFILER_LOCK_DIR, file), 'utf8'),
      );

    const env = readFileSync(join(seen, 'env'), 'utf8');
    for (const value of SECRET_VALUES) expect(env).not.toContain(value);
    const names = env
      .split('\n')
      .map((line) => line.slice(0, line.indexOf('=')))
      .filter(Boolean);
    expect(names.filter((n) => /TOKEN|SECRET|^ACTIONS_|^GITHUB_|^INPUT_|^RUNNER_TEMP$/i.test(n))).toEqual([]);
    expect(env).toContain('HTTPS_PROXY=http://proxy.invalid:3128');
    expect(env).toContain('NODE_EXTRA_CA_CERTS=/etc/ssl/extra.pem');
    expect(env).toContain('npm_config_build_from_source=v8-profiler-next');
  });

  it('turns a failed npm ci (an integrity mismatch) into a warning: the probe falls back', async () => {
    const { bin } = fakeNpm(
      'eintegrity',
      'echo "npm error code EINTEGRITY" >&2\necho "npm error Integrity checksum failed" >&2\nexit 1',
    );
    const warnings: string[] = [];
    const path = await installV8Profiler(
      join(root, 'eintegrity', 'prefix'),
      { ...JOB_ENV, PATH: `${bin}:${JOB_ENV.PATH}` },
      warnings,
      never,
    );
    expect(path).toBeUndefined();
    expect(warnings).toEqual([
      `v8-profiler-next ${V8_PROFILER_VERSION} could not be installed for this Node (npm error Integrity checksum failed); profiled with node:inspector instead`,
    ]);
  });

  it('installs nothing with HOTPATH_V8_PROFILER_INSTALL=false', async () => {
    const { bin, seen } = fakeNpm('off');
    const warnings: string[] = [];
    const path = await installV8Profiler(
      join(root, 'off', 'prefix'),
      { ...JOB_ENV, PATH: `${bin}:${JOB_ENV.PATH}`, HOTPATH_V8_PROFILER_INSTALL: 'false' },
      warnings,
      never,
    );
    expect(path).toBeUndefined();
    expect(warnings).toEqual([]);
    expect(existsSync(join(seen, 'argv'))).toBe(false);
  });

  it('does not install without its lockfile (a warning names the missing file)', async () => {
    const { bin, seen } = fakeNpm('nolock');
    const empty = join(root, 'nolock', 'lock');
    mkdirSync(empty);
    const warnings: string[] = [];
    const path = await installV8Profiler(
      join(root, 'nolock', 'prefix'),
      { ...JOB_ENV, PATH: `${bin}:${JOB_ENV.PATH}` },
      warnings,
      never,
      empty,
    );
    expect(path).toBeUndefined();
    expect(warnings).toEqual([
      `v8-profiler-next was not installed: its lockfile is missing (${join(empty, 'package-lock.json')}); profiled with node:inspector instead`,
    ]);
    expect(existsSync(join(seen, 'argv'))).toBe(false);
  });

  it.skipIf(process.env.HOTPATH_V8_PROFILER_REAL_INSTALL !== '1')(
    'really installs it from the lockfile, compiled from source, and the addon loads',
    async () => {
      const dir = join(root, 'real');
      const warnings: string[] = [];
      // the job's tokens, but this machine's own network settings, not the fake proxy above
      const network = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];
      const env: NodeJS.ProcessEnv = { ...JOB_ENV, NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS };
      for (const name of network) env[name] = process.env[name];
      const path = await installV8Profiler(dir, env, warnings, never);
      expect(warnings).toEqual([]);
      expect(path).toBe(join(dir, 'node_modules', 'v8-profiler-next'));
      const { execFileSync } = await import('node:child_process');
      const loaded = execFileSync(
        process.execPath,
        ['-e', `const p = require(${JSON.stringify(path)}); console.log(typeof p.startProfiling)`],
        { encoding: 'utf8' },
      );
      expect(loaded.trim()).toBe('function');
    },
    600_000,
  );
});

describe('installEnvironment (property)', () => {
  const name = fc.oneof(
    fc.constantFrom(
      ...Object.keys(JOB_ENV),
      'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
      'GITHUB_STEP_SUMMARY',
      'npm_config_registry',
    ),
    fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,20}$/),
    fc
      .tuple(
        fc.constantFrom('', 'GITHUB_', 'ACTIONS_', 'INPUT_', 'npm_config_', 'NPM_CONFIG_', 'LC_'),
        fc.constantFrom('TOKEN', 'X', 'github-token', '_authToken', 'SECRET', 'API_KEY', 'ALL'),
      )
      .map(([a, b]) => a + b),
  );

  it('never passes a token, an input, ACTIONS_*, GITHUB_* or RUNNER_TEMP, whatever the job holds', () => {
    fc.assert(
      fc.property(fc.dictionary(name, fc.string({ maxLength: 8 })), (env) => {
        const out = installEnvironment(env);
        for (const key of Object.keys(out)) {
          expect(key).not.toMatch(
            /TOKEN|SECRET|PASSWORD|API_KEY|_AUTH|^ACTIONS_|^GITHUB_|^INPUT_|^RUNNER_TEMP$/i,
          );
        }
        expect(out.npm_config_build_from_source).toBe('v8-profiler-next');
      }),
      { seed: 0x46_0a11, numRuns: 300 },
    );
  });
});
