import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HotpathCompareError } from '@hotpath/compare';
import { allowlistedEnvironment, runCommand } from '@hotpath/compare/internal';

/** The exact v8-profiler-next the Action installs at run time (a native addon, built for the job's Node). */
export const V8_PROFILER_VERSION = '1.10.0';

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

/**
 * Installs v8-profiler-next for the Node on PATH (the one the workflow set up) into a private
 * prefix, since the bundle cannot carry a native addon. Returns its path, or undefined (then
 * the probe falls back to node:inspector and the report says so). The prefix's package.json
 * allows the addon's install script (npm versions that run only approved install scripts would
 * otherwise skip its build). On abort (a cancelled job), runCommand stops npm and every process
 * below it — node-gyp, make, the compilers — before this rejects.
 */
export async function installV8Profiler(
  dir: string,
  env: NodeJS.ProcessEnv,
  warnings: string[],
  signal: AbortSignal,
): Promise<string | undefined> {
  if (env.HOTPATH_V8_PROFILER_INSTALL === 'false') return undefined;
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ private: true, allowScripts: { 'v8-profiler-next': true } }, null, 2)}\n`,
  );
  const { exit, output } = await runCommand(
    `npm install --no-save --no-package-lock --no-audit --no-fund --prefix . v8-profiler-next@${V8_PROFILER_VERSION}`,
    { cwd: dir, env: allowlistedEnvironment(env, INSTALL_NETWORK_ENV), timeoutMs: 240_000, signal },
  );
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
