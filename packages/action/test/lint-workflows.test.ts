// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are GitHub workflow expressions
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  jobProblems,
  markdownProblems,
  pinProblems,
  workflowProblems,
  writePermissions,
  // @ts-expect-error: a plain .mjs module without types
} from '../../../scripts/lib/workflow-rules.mjs';

// The rules of `pnpm lint:workflows` beyond actionlint (scripts/lib/workflow-rules.mjs): table
// tests per rule, with the false positives it must not raise, fast-check properties over
// generated workflows, and the script itself on this repository and on its old workflows.

type Problem = { line: number; message: string };
const lint = (text: string): Problem[] => workflowProblems(text);
const messages = (text: string): string[] => lint(text).map((p) => p.message);

const SHA = '3d3c42e5aac5ba805825da76410c181273ba90b1';
const CHECKOUT = `actions/checkout@${SHA}`;

/** A one-job workflow: `on`, the workflow's and the job's permissions (YAML), the steps (YAML). */
function workflow(on: string, steps: string, perms: { workflow?: string; job?: string } = {}): string {
  return [
    `on: ${on}`,
    ...(perms.workflow ? [`permissions: ${perms.workflow}`] : []),
    'jobs:',
    '  one:',
    '    runs-on: ubuntu-latest',
    ...(perms.job ? [`    permissions: ${perms.job}`] : []),
    '    steps:',
    ...steps
      .trim()
      .split('\n')
      .map((line) => `      ${line}`),
    '',
  ].join('\n');
}

const CHECKOUT_SAFE = `- uses: ${CHECKOUT}\n  with: { persist-credentials: false }`;

describe('rule: pinned by a full commit SHA', () => {
  it.each([
    ['actions/checkout@v4', true],
    ['actions/checkout@main', true],
    [`actions/checkout@${SHA.slice(0, 39)}`, true],
    ['some/action/sub@v1.2.3', true],
    ['some/repo/.github/workflows/x.yml@v1', true],
    [CHECKOUT, false],
    ['./', false],
    ['./.github/actions/local', false],
    ['docker://alpine:3', false],
    ['hotpath-dev/hotpath@v0', false],
  ])('%s: flagged %s', (uses, flagged) => {
    const problems = pinProblems(`steps:\n  - uses: ${uses} # a comment\n  - run: echo`);
    expect(problems.length > 0).toBe(flagged);
    if (flagged)
      expect(problems).toEqual([{ line: 2, message: `${uses} is not pinned by a full commit SHA` }]);
  });

  it("checks a README's yaml blocks, with the README's line numbers, and no other block", () => {
    const md = [
      '# title', // 1
      '```yaml', // 2
      'steps:', // 3
      `  - uses: ${CHECKOUT}`, // 4
      '  - uses: actions/setup-node@v4', // 5
      '```', // 6
      '```sh', // 7
      'uses: not/yaml@v1', // 8
      '```', // 9
      '```yml', // 10
      '- uses: other/thing@v2', // 11
      '```', // 12
    ].join('\n');
    expect(markdownProblems(md)).toEqual([
      { line: 5, message: 'actions/setup-node@v4 is not pinned by a full commit SHA' },
      { line: 11, message: 'other/thing@v2 is not pinned by a full commit SHA' },
    ]);
  });
});

describe('rule: write permission next to pull-request code', () => {
  const fails = (text: string, pattern: RegExp) => {
    const found = messages(text).filter((m) => pattern.test(m));
    expect(found, messages(text).join('\n')).toHaveLength(1);
  };

  it.each([
    ['pull_request.head.sha', '${{ github.event.pull_request.head.sha }}'],
    ['pull_request.head.ref', '${{ github.event.pull_request.head.ref }}'],
    ['head_ref', '${{ github.head_ref }}'],
    ['merge ref', 'refs/pull/${{ github.event.number }}/merge'],
    ['merge_commit_sha', '${{ github.event.pull_request.merge_commit_sha }}'],
    ['workflow_run head_sha', '${{ github.event.workflow_run.head_sha }}'],
  ])('an explicit checkout of the pull request (%s), on any event', (_, ref) => {
    for (const on of ['pull_request_target', 'workflow_run', 'issue_comment']) {
      const text = workflow(
        on,
        `- uses: ${CHECKOUT}\n  with: { ref: '${ref}', persist-credentials: false }`,
        { job: '{ contents: write }' },
      );
      fails(text, /job "one" holds contents: write and step 1 checks out the pull request/);
    }
  });

  it("a checkout of the pull request's head repository", () => {
    const text = workflow(
      'pull_request_target',
      `- uses: ${CHECKOUT}\n  with: { repository: '\${{ github.event.pull_request.head.repo.full_name }}', persist-credentials: false }`,
      { workflow: 'write-all' },
    );
    fails(text, /holds write-all and step 1 checks out the pull request's repository/);
  });

  it.each([
    ['gh pr checkout 42'],
    ['git fetch origin ${{ github.event.pull_request.head.sha }} && git checkout FETCH_HEAD'],
    ['git fetch origin refs/pull/1/head'],
  ])('a run: line that fetches the pull request: %s', (run) => {
    const text = workflow('pull_request_target', `- run: ${JSON.stringify(run)}`, {
      job: '{ pull-requests: write }',
    });
    fails(text, /holds pull-requests: write and step 1 fetches the pull request/);
  });

  it.each(['pull_request', 'pull_request_review', 'pull_request_review_comment', '[push, pull_request]'])(
    'on %s: the default checkout followed by uses: ./ or run:',
    (on) => {
      for (const next of ['- uses: ./', '- uses: ./.github/actions/x', '- run: make']) {
        const text = workflow(on, `${CHECKOUT_SAFE}\n${next}`, { job: '{ pull-requests: write }' });
        fails(text, /step 2 \(.*\) runs the pull request's code, which step 1 checked out/);
      }
    },
  );

  it('the hole this repository had: hotpath.yml report job (default checkout, then uses: ./)', () => {
    const text = [
      'on:',
      '  pull_request:',
      'permissions:',
      '  contents: read',
      'jobs:',
      '  report:',
      '    needs: measure',
      '    runs-on: ubuntu-latest',
      '    permissions:',
      '      contents: read',
      '      pull-requests: write',
      '      actions: read',
      '    steps:',
      `      - uses: ${CHECKOUT}`,
      '        with:',
      '          persist-credentials: false',
      '      - uses: ./',
      '        with:',
      '          mode: report',
    ].join('\n');
    expect(lint(text)).toEqual([
      {
        line: 6,
        message:
          'job "report" holds pull-requests: write and step 2 (uses: ./) runs the pull request\'s code, which step 1 checked out (the default checkout on pull_request is the pull request\'s merge commit): run pull-request code in a job with a read-only token, and write from a job that runs none',
      },
    ]);
    // ...and the fix: the base commit checked out before uses: ./
    const fixed = text.replace(
      '          persist-credentials: false',
      '          ref: ${{ github.event.pull_request.base.sha }}\n          persist-credentials: false',
    );
    expect(lint(fixed)).toEqual([]);
  });

  it('an unset permissions block is the repository default: counted as write-all', () => {
    expect(writePermissions({}, {})).toEqual([
      'write-all (permissions unset: the repository default token, which may write)',
    ]);
    const text = workflow('pull_request', `${CHECKOUT_SAFE}\n- run: npm test`);
    fails(text, /holds write-all \(permissions unset.*runs the pull request's code/);
  });

  it('inherits the workflow-level permissions; a job-level block replaces them', () => {
    expect(writePermissions({}, { permissions: { contents: 'write' } })).toEqual(['contents: write']);
    expect(writePermissions({ permissions: { contents: 'read' } }, { permissions: 'write-all' })).toEqual([]);
    expect(writePermissions({ permissions: {} }, {})).toEqual([]);
    expect(writePermissions({ permissions: 'read-all' }, {})).toEqual([]);
    expect(writePermissions({}, { permissions: { 'id-token': 'write', contents: 'read' } })).toEqual([
      'id-token: write',
    ]);
  });

  it.each([
    // false positives it must not raise
    [
      'a read-only job running the pull request',
      'pull_request',
      `${CHECKOUT_SAFE}\n- run: npm test`,
      '{ contents: read }',
    ],
    ['read-all', 'pull_request', `${CHECKOUT_SAFE}\n- uses: ./`, 'read-all'],
    ['no permissions at all ({})', 'pull_request', `${CHECKOUT_SAFE}\n- run: npm test`, '{}'],
    ['a push workflow with a write token', 'push', `${CHECKOUT_SAFE}\n- run: make`, '{ contents: write }'],
    [
      'pull_request_target: the default checkout is the base',
      'pull_request_target',
      `${CHECKOUT_SAFE}\n- uses: ./\n  with: { mode: report }\n- run: echo`,
      '{ pull-requests: write }',
    ],
    [
      'workflow_run: the default checkout is the default branch',
      'workflow_run',
      `${CHECKOUT_SAFE}\n- run: echo`,
      '{ pull-requests: write }',
    ],
    [
      'the base checked out before uses: ./',
      'pull_request',
      `- uses: ${CHECKOUT}\n  with: { ref: '\${{ github.event.pull_request.base.sha }}', persist-credentials: false }\n- uses: ./\n  with: { mode: report }`,
      '{ pull-requests: write }',
    ],
    [
      'run: steps before the checkout, actions after it',
      'pull_request',
      `- run: echo hi\n${CHECKOUT_SAFE}\n- uses: actions/upload-artifact@${SHA}`,
      '{ pull-requests: write }',
    ],
    ['no checkout at all', 'pull_request', '- run: gh pr comment 1 --body hi', '{ pull-requests: write }'],
    [
      'a run: line that only names the head ref',
      'pull_request_target',
      '- run: echo "${{ github.event.pull_request.head.sha }}"',
      '{ pull-requests: write }',
    ],
  ])('no problem: %s', (_, on, steps, job) => {
    expect(messages(workflow(on, steps, { job }))).toEqual([]);
  });

  it("narrows a job's events by its if: on github.event_name", () => {
    const steps = `${CHECKOUT_SAFE}\n- run: make release`;
    const write = '{ contents: write }';
    const only = (condition: string) =>
      workflow('[push, pull_request]', steps, { job: write }).replace(
        '    runs-on:',
        `    if: ${condition}\n    runs-on:`,
      );
    expect(messages(only("github.event_name == 'push'"))).toEqual([]);
    expect(messages(only("${{ github.event_name != 'pull_request' }}"))).toEqual([]);
    expect(messages(only("github.event_name == 'push' || github.actor == 'x'"))).toHaveLength(1);
    expect(messages(only("github.event_name == 'pull_request'"))).toHaveLength(1);
  });
});

describe('rule: installs in a job with a write permission', () => {
  it.each([
    'npm install',
    'npm ci',
    'npm i -g pnpm',
    'pnpm install --frozen-lockfile',
    'cd app && yarn',
    'yarn install',
    'bun add x',
  ])('flags %s', (run) => {
    const text = workflow('push', `${CHECKOUT_SAFE}\n- run: ${run}`, { job: '{ contents: write }' });
    expect(messages(text)).toEqual([
      `job "one" holds contents: write and its step 2 installs packages, running their install scripts (${run}): install and build in a job with a read-only token`,
    ]);
  });

  it.each([
    'npm ci --ignore-scripts',
    'npm publish x.tgz --provenance',
    'npm run build',
    'yarn build',
    'pnpm run ci',
  ])('not %s (as an install)', (run) => {
    const text = workflow('push', `${CHECKOUT_SAFE}\n- run: ${run}`, { job: '{ contents: write }' });
    expect(messages(text).filter((m) => m.includes('installs packages'))).toEqual([]);
  });

  it('not in a read-only job', () => {
    expect(
      messages(workflow('push', `${CHECKOUT_SAFE}\n- run: npm ci`, { job: '{ contents: read }' })),
    ).toEqual([]);
  });
});

describe('rule: code built or started in a job with a write permission', () => {
  const problem = (what: string) =>
    `job "one" holds contents: write, issues: write and its step 2 ${what}: any process it starts can read the token from its parent's environment; build and run code in a job with a read-only token, and write from a job that runs none`;
  const writes = { job: '{ contents: write, issues: write }' };

  it.each([
    'npm run build',
    'npm test',
    'pnpm run ci',
    'pnpm exec tsc',
    'pnpm build',
    'yarn build',
    'npx some-tool',
    'cd app && npm start',
    'node server.js',
    'node --max-old-space-size=512 scripts/x.mjs',
    'NODE_ENV=production node dist/index.js &',
  ])('flags run: %s', (run) => {
    expect(messages(workflow('push', `${CHECKOUT_SAFE}\n- run: ${run}`, writes))).toEqual([
      problem(`runs ${run}`),
    ]);
  });

  it.each([
    'node -e "console.log(1)"',
    "node -p 'require(1)'",
    'node --version',
    'npm publish x.tgz --provenance --ignore-scripts',
    'git push origin HEAD',
    'echo node is fine # node server.js in a comment',
    'gh pr create --title x',
  ])('not run: %s', (run) => {
    expect(messages(workflow('push', `${CHECKOUT_SAFE}\n- run: ${run}`, writes))).toEqual([]);
  });

  it.each([
    ['hotpath-dev/hotpath@v0', '{ mode: drift }', 'drift'],
    ['hotpath-dev/hotpath@v0', '{ mode: drift-measure }', 'drift-measure'],
    ['hotpath-dev/hotpath@v0', '{ mode: measure }', 'measure'],
    ['hotpath-dev/hotpath@v0', '{ config: x.json }', 'all'],
    ['./', '{ mode: all }', 'all'],
    ['./', "{ mode: '${{ inputs.mode }}' }", '${{ inputs.mode }}'],
  ])('flags uses: %s with %s', (uses, withBlock, mode) => {
    const text = workflow('push', `${CHECKOUT_SAFE}\n- uses: ${uses}\n  with: ${withBlock}`, writes);
    expect(messages(text)).toEqual([
      problem(`uses ${uses} with mode ${mode}, which runs the repository's code`),
    ]);
  });

  it.each([
    ['hotpath-dev/hotpath@v0', 'drift-record'],
    ['./', 'report'],
  ])('not uses: %s in mode %s', (uses, mode) => {
    const text = workflow('push', `${CHECKOUT_SAFE}\n- uses: ${uses}\n  with: { mode: ${mode} }`, writes);
    expect(messages(text)).toEqual([]);
  });

  it('the old one-job drift workflow is flagged; the two-job one is not', () => {
    const job = (perms: string, mode: string) =>
      workflow('push', `${CHECKOUT_SAFE}\n- uses: hotpath-dev/hotpath@v0\n  with: { mode: ${mode} }`, {
        job: perms,
      });
    expect(messages(job('{ contents: write, issues: write }', 'drift'))).toHaveLength(1);
    expect(messages(job('{ contents: read }', 'drift-measure'))).toEqual([]);
    expect(messages(job('{ contents: write, issues: write }', 'drift-record'))).toEqual([]);
  });
});

describe('rule: persist-credentials: false in a job with a write permission', () => {
  it.each([
    [`- uses: ${CHECKOUT}`, true],
    [`- uses: ${CHECKOUT}\n  with: { persist-credentials: true }`, true],
    [`- uses: ${CHECKOUT}\n  with: { fetch-depth: 0 }`, true],
    [`- uses: ${CHECKOUT}\n  with: { persist-credentials: false }`, false],
    [`- uses: ${CHECKOUT}\n  with: { persist-credentials: 'false' }`, false],
  ])('%s: flagged %s', (steps, flagged) => {
    const write = messages(workflow('push', steps, { job: '{ issues: write }' }));
    expect(write).toEqual(
      flagged
        ? [
            'job "one" holds issues: write and its step 1 (actions/checkout) does not set persist-credentials: false',
          ]
        : [],
    );
    // a read-only job may keep the default
    expect(messages(workflow('push', steps, { job: '{ contents: read }' }))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties: generated workflows, linted as objects and as the (JSON, hence YAML) text of them.

const SEED = 0x46_1f0e;
const permission = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('read-all', 'write-all'),
  fc.dictionary(
    fc.constantFrom('contents', 'pull-requests', 'issues', 'id-token', 'actions', 'packages'),
    fc.constantFrom('read', 'write', 'none'),
    { maxKeys: 4 },
  ),
);
const step = fc.oneof(
  fc.record({
    uses: fc.constant(CHECKOUT),
    with: fc.record(
      {
        ref: fc.constantFrom(
          '${{ github.event.pull_request.head.sha }}',
          '${{ github.event.pull_request.base.sha }}',
          '${{ github.head_ref }}',
          'main',
        ),
        'persist-credentials': fc.constantFrom(true, false, 'false'),
      },
      { requiredKeys: [] },
    ),
  }),
  fc.record({ uses: fc.constantFrom('./', `actions/setup-node@${SHA}`, 'hotpath-dev/hotpath@v0') }),
  fc.record({ run: fc.constantFrom('npm test', 'echo hi', 'make', 'gh pr checkout 1', 'pnpm install') }),
);
const job = fc.record(
  { permissions: permission, steps: fc.array(step, { maxLength: 5 }) },
  { requiredKeys: ['steps'] },
);
const events = fc.subarray(['push', 'pull_request', 'pull_request_target', 'workflow_run', 'schedule'], {
  minLength: 1,
});
const generated = fc.record(
  {
    on: events,
    permissions: permission,
    jobs: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/), job, { minKeys: 1, maxKeys: 3 }),
  },
  { requiredKeys: ['on', 'jobs'] },
);
type Generated = {
  on: string[];
  permissions?: unknown;
  jobs: Record<string, { permissions?: unknown; steps: unknown[] }>;
};
/** The same workflow with every permission it grants read-only. */
const readOnly = (w: Generated): Generated => ({
  ...w,
  permissions: 'read-all',
  jobs: Object.fromEntries(
    Object.entries(w.jobs).map(([id, j]) => [id, { ...j, permissions: { contents: 'read' } }]),
  ),
});

describe('properties of the job rules', () => {
  it('a job that holds no write permission is never a problem, whatever it runs', () => {
    fc.assert(
      fc.property(generated, (w) => {
        expect(jobProblems(readOnly(w as Generated))).toEqual([]);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('the YAML text of a workflow gets the job problems of its object (the parse adds or drops none)', () => {
    fc.assert(
      fc.property(generated, (w) => {
        const text = JSON.stringify(w, null, 2); // JSON is YAML: the rules' parser reads it
        const fromText = lint(text)
          .map((p) => p.message)
          .filter((m) => m.startsWith('job '));
        const fromObject = jobProblems(w).map((p: Problem) => p.message);
        expect(fromText.sort()).toEqual(fromObject.sort());
      }),
      { seed: SEED + 1, numRuns: 300 },
    );
  });

  it('write-all on a job that checks out the default on pull_request and runs run: is always a problem', () => {
    fc.assert(
      fc.property(generated, fc.constantFrom('- run: make', '- uses: ./'), (w, runs) => {
        const on = [...new Set([...(w as Generated).on, 'pull_request'])];
        const text = [
          `on: [${on.join(', ')}]`,
          'jobs:',
          '  j:',
          '    runs-on: ubuntu-latest',
          '    permissions: write-all',
          '    steps:',
          `      - uses: ${CHECKOUT}`,
          '        with: { persist-credentials: false }',
          `      ${runs}`,
        ].join('\n');
        expect(messages(text).filter((m) => /runs the pull request's code/.test(m))).toHaveLength(1);
      }),
      { seed: SEED + 2, numRuns: 100 },
    );
  });

  it('persist-credentials: false on every checkout removes exactly the persist-credentials problems', () => {
    fc.assert(
      fc.property(generated, (w) => {
        const g = w as Generated;
        const fixed: Generated = {
          ...g,
          jobs: Object.fromEntries(
            Object.entries(g.jobs).map(([id, j]) => [
              id,
              {
                ...j,
                steps: j.steps.map((s) => {
                  const st = s as { uses?: string; with?: Record<string, unknown> };
                  return st.uses === CHECKOUT
                    ? { ...st, with: { ...st.with, 'persist-credentials': false } }
                    : st;
                }),
              },
            ]),
          ),
        };
        const before = jobProblems(g).map((p: Problem) => p.message);
        const after = jobProblems(fixed).map((p: Problem) => p.message);
        expect(after).toEqual(before.filter((m: string) => !m.includes('persist-credentials')));
      }),
      { seed: SEED + 3, numRuns: 300 },
    );
  });

  it('a third-party uses: is flagged exactly when its ref is not 40 hex digits', () => {
    const ref = fc.oneof(
      fc.stringMatching(/^[0-9a-f]{40}$/),
      fc.stringMatching(/^v\d{1,2}(\.\d{1,2}){0,2}$/),
      fc.stringMatching(/^[0-9a-f]{39}$/),
      fc.constantFrom('main', 'master', 'latest'),
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}\/[a-z][a-z0-9-]{0,10}$/), ref, (repo, r) => {
        fc.pre(repo !== 'hotpath-dev/hotpath');
        const flagged = pinProblems(`- uses: ${repo}@${r}`).length === 1;
        expect(flagged).toBe(!/^[0-9a-f]{40}$/.test(r));
      }),
      { seed: SEED + 4, numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The script: this repository passes; its workflows as they were before round three fail.

const repoRoot = new URL('../../../', import.meta.url).pathname;
const script = join(repoRoot, 'scripts', 'lint-workflows.mjs');
const tmp = mkdtempSync(join(tmpdir(), 'hotpath-lint-workflows-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const OLD_RELEASE = `name: release
on:
  push:
    branches: [main]
permissions:
  contents: read
jobs:
  release:
    runs-on: ubuntu-latest
    permissions:
      contents: write
      pull-requests: write
      id-token: write
    steps:
      - uses: ${CHECKOUT}
        with:
          fetch-depth: 0
      - name: install
        run: pnpm install --frozen-lockfile
      - run: bash .ci/run
`;

describe('scripts/lint-workflows.mjs', () => {
  it("passes on this repository's workflows and the READMEs' yaml blocks", () => {
    const run = spawnSync(process.execPath, [script], { cwd: repoRoot, encoding: 'utf8' });
    expect(run.stdout).toMatch(
      /^lint-workflows: \d+ workflow files and the YAML blocks of \d+ markdown files pass/m,
    );
    expect(run.status).toBe(0);
  });

  it('fails on a release job that installs and holds write permissions, with one line per problem', () => {
    const file = join(tmp, 'release.yml');
    writeFileSync(file, OLD_RELEASE);
    const run = spawnSync(process.execPath, [script, file], { cwd: tmp, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout.trim().split('\n')).toEqual([
      'release.yml:8: job "release" holds contents: write, pull-requests: write, id-token: write and its step 2 installs packages, running their install scripts (pnpm install --frozen-lockfile): install and build in a job with a read-only token',
      'release.yml:8: job "release" holds contents: write, pull-requests: write, id-token: write and its step 1 (actions/checkout) does not set persist-credentials: false',
      'lint-workflows: FAILED: 2 problem(s) in 1 workflow files and the YAML blocks of 0 markdown files',
    ]);
  });

  it('fails on a README whose example pins an action by tag', () => {
    const file = join(tmp, 'README.md');
    writeFileSync(file, '# x\n\n```yaml\nsteps:\n  - uses: actions/checkout@v4\n```\n');
    const run = spawnSync(process.execPath, [script, file], { cwd: tmp, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('README.md:5: actions/checkout@v4 is not pinned by a full commit SHA');
  });
});
