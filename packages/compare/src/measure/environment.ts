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

/** A name that is never passed, listed or not: a token, an input, ACTIONS_*, a command file. */
const neverPassed = (upper: string) =>
  DROPPED_NAMES.has(upper) || DROPPED_PREFIXES.some((p) => upper.startsWith(p));

/**
 * Returns a copy of `env` without tokens, inputs, ACTIONS_*, the workflow's command files and
 * secret-looking variables. A secret-looking name listed in `pass` (DB_PASSWORD, MY_API_KEY) is
 * passed: the user asked for it, and passEnvWarnings says so loudly. The tokens, inputs,
 * ACTIONS_* and command files are never passed, listed or not.
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
    if (neverPassed(upper)) continue;
    // A secret-looking name the user listed in passEnv is passed on purpose (e.g. DB_PASSWORD),
    // with a warning (passEnvWarnings).
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
  // the CA bundles a runner behind a TLS-inspecting proxy names (paths, no secret): without them
  // npm, git and the server's own HTTPS calls fail there with SELF_SIGNED_CERT_IN_CHAIN
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
]);
/** Prefixes the allowlist keeps: locale, and the package managers' own settings. */
const ALLOWED_PREFIXES = ['LC_', 'npm_config_', 'NPM_CONFIG_', 'PNPM_', 'YARN_', 'COREPACK_'];

/**
 * The environment for code from a pull request where the job may hold secrets (the Action):
 * only an allowlist — PATH, HOME, locale, TMPDIR, CI, RUNNER_OS/ARCH/TOOL_CACHE, NODE_OPTIONS,
 * the CA bundles (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE/DIR), the npm/pnpm/yarn settings — plus the
 * names in `pass`. Never a token, an input, ACTIONS_*,
 * GITHUB_ENV/PATH/OUTPUT/STEP_SUMMARY (files that would let the code steer the workflow) or the
 * runner's temp folder that holds them, even when listed. A secret-looking name (DB_PASSWORD,
 * MY_API_KEY) passes only when listed in `pass`, and then with a warning (passEnvWarnings): a
 * server may need a database password, and the pull request's code can read whatever it gets.
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

/**
 * What a run says about `pass` (passEnv) given the environment it starts from: the listed names
 * that are never passed (a token, an input, ACTIONS_*: dropped, never silently), and the listed
 * secret-looking names that are set and passed (the pull request's code can read them). Empty
 * when neither. Names are shown as JSON strings, at most 20 of each.
 */
export function passEnvWarnings(pass: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const names = (list: string[]) =>
    `${list
      .slice(0, 20)
      .map((n) => JSON.stringify(n))
      .join(', ')}${list.length > 20 ? ` and ${list.length - 20} more` : ''}`;
  const never = pass.filter((name) => neverPassed(name.toUpperCase()));
  const secret = pass.filter(
    (name) => !neverPassed(name.toUpperCase()) && SECRET_PATTERN.test(name) && env[name] !== undefined,
  );
  const warnings: string[] = [];
  if (never.length > 0)
    warnings.push(
      `passEnv lists ${names(never)}, never passed to install, build, setup or the server (a token, an input or a runner variable): left out`,
    );
  if (secret.length > 0)
    warnings.push(
      `passEnv passes ${names(secret)} (secret-looking name${secret.length > 1 ? 's' : ''}) to install, build, setup and the server: the pull request's code can read ${secret.length > 1 ? 'them' : 'it'} and send ${secret.length > 1 ? 'them' : 'it'} anywhere; list only what the server needs, never a secret a pull request must not see`,
    );
  return warnings;
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
