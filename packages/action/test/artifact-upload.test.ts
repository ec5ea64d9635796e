import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { artifactName, artifactRuntimeMissing, uploadReportArtifact } from '../src/artifact-upload.js';
import { defined } from './helpers/defined.js';

// A local stand-in for GitHub's artifact service (the results API and the blob store behind its
// signed URL), recording what the real @actions/artifact client sends it.
interface Recorded {
  method: string;
  url: string;
  body: Buffer;
}
let server: Server;
let port = 0;
let refuse = false;
const recorded: Recorded[] = [];
const dir = mkdtempSync(join(tmpdir(), 'hotpath-artifact-'));
const savedEnv = { ...process.env };

beforeAll(async () => {
  writeFileSync(join(dir, 'report.json'), '{"schema":"hotpath-report/1"}\n');
  writeFileSync(join(dir, 'head.folded'), 'main;hot 42\n');
  writeFileSync(join(dir, 'report.html'), '<!doctype html><title>hotpath</title>\n');
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      recorded.push({ method: req.method ?? '', url, body: Buffer.concat(chunks) });
      const json = (status: number, value: object) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (refuse) return json(400, { code: 'invalid_argument', msg: 'refused by the fake' });
      if (url.endsWith('/CreateArtifact'))
        return json(200, { ok: true, signed_upload_url: `http://127.0.0.1:${port}/blob/report.zip?sig=t` });
      if (url.endsWith('/FinalizeArtifact')) return json(200, { ok: true, artifact_id: '42' });
      if (url.startsWith('/blob/')) {
        res.writeHead(201, { 'x-ms-request-id': '1', etag: '"e"' });
        return res.end();
      }
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterEach(() => {
  recorded.length = 0;
  refuse = false;
  process.env = { ...savedEnv };
});

afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

function runnerEnv(): NodeJS.ProcessEnv {
  // A JWT whose scope names the run and job backend ids, as the runner's token does.
  const claims = Buffer.from(JSON.stringify({ scp: 'Actions.Results:run-1:job-1' })).toString('base64url');
  return {
    ...savedEnv,
    ACTIONS_RUNTIME_TOKEN: `h.${claims}.s`,
    ACTIONS_RESULTS_URL: `http://127.0.0.1:${port}/`,
    GITHUB_JOB: 'perf check',
    GITHUB_RUN_ATTEMPT: '2',
  };
}

describe('uploadReportArtifact', () => {
  it('skips, saying why, where the Actions runtime is absent (CLI, other CI)', async () => {
    const env = { ...savedEnv, ACTIONS_RUNTIME_TOKEN: '', ACTIONS_RESULTS_URL: '' };
    expect(artifactRuntimeMissing(env)).toMatch(/no ACTIONS_RUNTIME_TOKEN, ACTIONS_RESULTS_URL/);
    const result = await uploadReportArtifact(dir, env);
    expect(result).toEqual({ state: 'skipped', reason: expect.stringMatching(/not available to this step/) });
    expect(recorded).toHaveLength(0);
  });

  it('uploads every report file as one zip through the artifact service', async () => {
    process.env = runnerEnv();
    const result = await uploadReportArtifact(dir, process.env);
    expect(result).toMatchObject({ state: 'uploaded', name: 'hotpath-report-perf-check-2', id: 42 });
    const create = defined(
      recorded.find((r) => r.url.endsWith('/CreateArtifact')),
      'a CreateArtifact request',
    );
    expect(JSON.parse(create.body.toString())).toMatchObject({
      name: 'hotpath-report-perf-check-2',
      workflow_run_backend_id: 'run-1',
      workflow_job_run_backend_id: 'job-1',
    });
    const blocks = recorded.filter((r) => r.url.includes('comp=block&'));
    const zip = Buffer.concat(blocks.map((b) => b.body));
    expect(zip.subarray(0, 2).toString()).toBe('PK');
    expect(zip.includes('report.json')).toBe(true);
    expect(zip.includes('head.folded')).toBe(true);
    expect(zip.includes('report.html')).toBe(true);
    expect(result.state === 'uploaded' && result.files.map((f) => f.slice(dir.length + 1)).sort()).toEqual([
      'head.folded',
      'report.html',
      'report.json',
    ]);
    expect(recorded.some((r) => r.url.endsWith('/FinalizeArtifact'))).toBe(true);
  });

  it('reports a refusal as failed, without throwing', async () => {
    process.env = runnerEnv();
    refuse = true;
    const result = await uploadReportArtifact(dir, process.env);
    expect(result).toEqual({ state: 'failed', reason: expect.stringMatching(/refused by the fake/) });
  });
});

describe('artifactName', () => {
  it('is unique per job and attempt, with characters the service accepts', () => {
    expect(artifactName({ GITHUB_JOB: 'a/b:c', GITHUB_RUN_ATTEMPT: '3' })).toBe('hotpath-report-a-b-c-3');
    expect(artifactName({})).toBe('hotpath-report-job-1');
  });
});
