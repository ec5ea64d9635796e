import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HotpathCompareError } from '@hotpath/compare';
import { allowlistedEnvironment, runCommand } from '@hotpath/compare/internal';

/** The exact v8-profiler-next the Action installs at run time (a native addon, built for the job's Node). */
export const V8_PROFILER_VERSION = '1.10.0';

/**
 * The folder with the install's package.json and package-lock.json (lockfileVersion 3: every
 * package's exact version and sha512 integrity, no `resolved` URLs). It sits beside src/ and
 * dist/ in packages/action, and GitHub runs the Action from the whole repository, so the bundle
 * (dist/index.js) and the sources find it at the same relative path.
 */
export const V8_PROFILER_LOCK_DIR = fileURLToPath(new URL('../v8-profiler-lock/', import.meta.url));

/** The job's network settings, which npm needs behind a proxy or a private CA (no PR code runs yet). */
const INSTALL_NETWORK_ENV = [
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
];

/** The command that installs it: exactly the lockfile, nothing resolved anew. */
export const V8_PROFILER_INSTALL_COMMAND = 'npm ci --no-audit --no-fund';

/**
 * The environment npm and the addon's install script get: the allowlist of
 * `allowlistedEnvironment` (PATH, HOME, locale, TMPDIR, CI, the package managers' settings; never
 * GITHUB_TOKEN, INPUT_*, ACTIONS_* — the runtime and id-token request tokens —, GITHUB_* or
 * anything secret-looking) plus the proxy and CA variables, and a forced source build: without
 * it node-pre-gyp would download a prebuilt binary from the package's release page, which no
 * lockfile checks; with it, only the integrity-checked sources are compiled (node-gyp fetches the
 * job Node's headers from the Node.js distribution and checks them against its SHASUMS256).
 */
export function installEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...allowlistedEnvironment(env, INSTALL_NETWORK_ENV),
    npm_config_build_from_source: 'v8-profiler-next',
  };
}

/**
 * Installs v8-profiler-next for the Node on PATH (the one the workflow set up) into a private
 * prefix, since the bundle cannot carry a native addon: the shipped package.json and
 * package-lock.json are copied into `dir` and `npm ci` installs exactly them, each package
 * checked against its sha512 integrity, with `installEnvironment` (no token). Returns its path,
 * or undefined (then the probe falls back to node:inspector and the report says so). The
 * package.json allows the addon's install script (npm versions that run only approved install
 * scripts would otherwise skip its build). On abort (a cancelled job), runCommand stops npm and
 * every process below it — node-gyp, make, the compilers — before this rejects.
 */
export async function installV8Profiler(
  dir: string,
  env: NodeJS.ProcessEnv,
  warnings: string[],
  signal: AbortSignal,
  lockDir: string = V8_PROFILER_LOCK_DIR,
): Promise<string | undefined> {
  if (env.HOTPATH_V8_PROFILER_INSTALL === 'false') return undefined;
  const lockfile = join(lockDir, 'package-lock.json');
  if (!existsSync(lockfile) || !existsSync(join(lockDir, 'package.json'))) {
    warnings.push(
      `v8-profiler-next was not installed: its lockfile is missing (${lockfile}); profiled with node:inspector instead`,
    );
    return undefined;
  }
  mkdirSync(dir, { recursive: true });
  for (const file of ['package.json', 'package-lock.json'])
    copyFileSync(join(lockDir, file), join(dir, file));
  const { exit, output } = await runCommand(V8_PROFILER_INSTALL_COMMAND, {
    cwd: dir,
    env: installEnvironment(env),
    timeoutMs: 300_000,
    signal,
  });
  // A cancelled job: runCommand has stopped npm and everything it started.
  if (signal.aborted)
    throw new HotpathCompareError(
      'HP_COMPARE_ABORTED',
      `installing v8-profiler-next was aborted (${String(signal.reason?.message ?? signal.reason)})`,
    );
  if (exit.code !== 0) {
    warnings.push(
      `v8-profiler-next ${V8_PROFILER_VERSION} could not be installed for this Node (${output.last(1)[0] ?? `exit ${exit.code}`}); profiled with node:inspector instead`,
    );
    return undefined;
  }
  return join(dir, 'node_modules', 'v8-profiler-next');
}
