/**
 * The environment handed to code from the pull request (server, setup, install, build).
 * That code is untrusted: it never sees the GitHub token, the Action's inputs, the runner's
 * internal tokens, or anything that looks like a secret.
 */
const DROPPED_PREFIXES = ['INPUT_', 'ACTIONS_', 'GITHUB_TOKEN', 'RUNNER_TOKEN', 'HOTPATH_PROBE_'];
const DROPPED_NAMES = new Set([
  'GH_TOKEN',
  'NPM_TOKEN',
  'NODE_AUTH_TOKEN',
  'GITHUB_TOKEN',
  'GITHUB_ENV',
  'GITHUB_PATH',
  'GITHUB_OUTPUT',
  'GITHUB_STATE',
  'GITHUB_STEP_SUMMARY',
]);
const SECRET_PATTERN = /(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|API_KEY|ACCESS_KEY|_AUTH)/i;

/**
 * Returns a copy of `env` without tokens, inputs, ACTIONS_*, the workflow's command files and
 * secret-looking variables (those listed in `pass` excepted from the last rule only).
 */
export function untrustedEnvironment(
  env: NodeJS.ProcessEnv,
  pass: readonly string[] = [],
): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  const listed = new Set(pass);
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const upper = name.toUpperCase();
    if (DROPPED_NAMES.has(upper)) continue;
    if (DROPPED_PREFIXES.some((p) => upper.startsWith(p))) continue;
    // A secret-looking name the user listed in passEnv is passed on purpose (e.g. DB_PASSWORD).
    if (SECRET_PATTERN.test(upper) && !listed.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/**
 * Variables the allowlist keeps (exact names). Not RUNNER_TEMP: on GitHub it holds the runner's
 * command files (GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT are files in it).
 */
const ALLOWED_NAMES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TERM',
  'TMPDIR',
  'TMP',
  'TEMP',
  'CI',
  'RUNNER_OS',
  'RUNNER_ARCH',
  'RUNNER_TOOL_CACHE',
  'NODE_OPTIONS',
  'NODE_ENV',
  'COREPACK_HOME',
  'XDG_CACHE_HOME',
  'XDG_CONFIG_HOME',
]);
/** Prefixes the allowlist keeps: locale, and the package managers' own settings. */
const ALLOWED_PREFIXES = ['LC_', 'npm_config_', 'NPM_CONFIG_', 'PNPM_', 'YARN_', 'COREPACK_'];

/**
 * The environment for code from a pull request where the job may hold secrets (the Action):
 * only an allowlist — PATH, HOME, locale, TMPDIR, CI, RUNNER_OS/ARCH/TOOL_CACHE, NODE_OPTIONS,
 * the npm/pnpm/yarn settings — plus the names in `pass`, and never a token, an input, ACTIONS_*,
 * GITHUB_ENV/PATH/OUTPUT/STEP_SUMMARY (files that would let the code steer the workflow), the
 * runner's temp folder that holds them, or anything secret-looking, even when listed.
 */
export function allowlistedEnvironment(
  env: NodeJS.ProcessEnv,
  pass: readonly string[] = [],
): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  const extra = new Set(pass);
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const allowed =
      ALLOWED_NAMES.has(name) || ALLOWED_PREFIXES.some((p) => name.startsWith(p)) || extra.has(name);
    if (allowed) out[name] = value;
  }
  for (const name of Object.keys(out)) {
    if (/^GITHUB_/.test(name) && !extra.has(name)) delete out[name];
  }
  return untrustedEnvironment(out, pass);
}

/** Quotes one path for NODE_OPTIONS (which accepts double-quoted values). */
function quoteForNodeOptions(path: string): string {
  return `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Appends `--require <probe>` to any NODE_OPTIONS the user already has. */
export function withProbePreloaded(existing: string | undefined, probePath: string): string {
  const require = `--require ${quoteForNodeOptions(probePath)}`;
  return existing && existing.trim() !== '' ? `${existing.trim()} ${require}` : require;
}
