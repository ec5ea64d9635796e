import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** What happened to the report files when the Action tried to upload them. */
export type ArtifactUpload =
  | { state: 'uploaded'; name: string; id?: number; size?: number; files: string[] }
  | { state: 'skipped'; reason: string }
  | { state: 'failed'; reason: string };

/** The workflow artifact's name: unique per job and attempt, as the artifact service requires. */
export function artifactName(env: NodeJS.ProcessEnv): string {
  const job = (env.GITHUB_JOB ?? 'job').replace(/[^A-Za-z0-9_.-]/g, '-');
  return `hotpath-report-${job}-${env.GITHUB_RUN_ATTEMPT ?? '1'}`;
}

/**
 * Why the Actions runtime cannot take an artifact from this step, or undefined when it can.
 * The runner gives JavaScript actions ACTIONS_RUNTIME_TOKEN and ACTIONS_RESULTS_URL; outside a
 * runner (the CLI, tests, other CI) they are absent.
 */
export function artifactRuntimeMissing(env: NodeJS.ProcessEnv): string | undefined {
  const missing = ['ACTIONS_RUNTIME_TOKEN', 'ACTIONS_RESULTS_URL'].filter((name) => !env[name]);
  return missing.length
    ? `the Actions runtime is not available to this step (no ${missing.join(', ')})`
    : undefined;
}

/** Uploads every file of the report folder as one artifact; never throws. */
export async function uploadReportArtifact(dir: string, env: NodeJS.ProcessEnv): Promise<ArtifactUpload> {
  const missing = artifactRuntimeMissing(env);
  if (missing) return { state: 'skipped', reason: missing };
  const files = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(dir, entry.name));
  if (files.length === 0) return { state: 'skipped', reason: `no files in ${dir}` };
  const name = artifactName(env);
  try {
    const { DefaultArtifactClient } = await import('@actions/artifact');
    const result = await new DefaultArtifactClient().uploadArtifact(name, files, dir);
    return { state: 'uploaded', name, id: result.id, size: result.size, files };
  } catch (err) {
    return { state: 'failed', reason: (err as Error).message };
  }
}
