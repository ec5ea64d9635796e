/**
 * The environment handed to code from the pull request (server, setup, install, build).
 * That code is untrusted: it never sees the GitHub token, the Action's inputs, the runner's
 * internal tokens, or anything that looks like a secret.
 */
const DROPPED_PREFIXES = ['INPUT_', 'ACTIONS_', 'GITHUB_TOKEN', 'RUNNER_TOKEN', 'HOTPATH_PROBE_'];
const DROPPED_NAMES = new Set(['GH_TOKEN', 'NPM_TOKEN', 'NODE_AUTH_TOKEN', 'GITHUB_TOKEN']);
const SECRET_PATTERN = /(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|API_KEY|ACCESS_KEY)/i;

/** Returns a copy of `env` without tokens, inputs, ACTIONS_* and secret-looking variables. */
export function untrustedEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const upper = name.toUpperCase();
    if (DROPPED_NAMES.has(upper)) continue;
    if (DROPPED_PREFIXES.some((p) => upper.startsWith(p))) continue;
    if (SECRET_PATTERN.test(upper)) continue;
    out[name] = value;
  }
  return out;
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
