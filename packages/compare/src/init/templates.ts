import type { PackageManager } from './detect.js';

/**
 * hotpath.config.json: the start command, one scenario per route and, when given, the SLO every
 * scenario's capacity is searched at (its canonical text); every other setting default.
 */
export function configFile(start: string, routes: readonly string[], slo?: string): string {
  const config = {
    $schema: './node_modules/@hotpath/compare/hotpath.config.schema.json',
    start,
    ...(slo ? { slo } : {}),
    scenarios: routes.map((url) => ({ name: url, url })),
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

const CHECKOUT = 'actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1';
const SETUP_NODE = 'actions/setup-node@820762786026740c76f36085b0efc47a31fe5020 # v7.0.0';
const UPLOAD = 'actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f # v7.0.0';
const DOWNLOAD = 'actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1';

/**
 * The measuring workflow: on pull_request, a read-only token, no credentials left in
 * .git/config; the results go up as an artifact for the report workflow.
 */
export function measureWorkflow(packageManager: PackageManager): string {
  const setupPnpm =
    packageManager === 'pnpm' ? `      - run: corepack enable # pnpm, as the lockfile says\n` : '';
  return `# Measures the pull request's server against its base branch's under the same load.
# Runs the PR's code, so it holds only a read-only token; hotpath-report.yml comments.
name: hotpath
on:
  pull_request:
permissions:
  contents: read
jobs:
  measure:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: ${CHECKOUT}
        with:
          fetch-depth: 0 # the base commit must be reachable for the base checkout
          persist-credentials: false
      - uses: ${SETUP_NODE}
        with:
          node-version: 24
          package-manager-cache: false
${setupPnpm}      - uses: hotpath-dev/hotpath@v0
        with:
          mode: measure
          config: hotpath.config.json
          github-token: '' # no token in the step whose environment the PR's code can read
      - uses: ${UPLOAD}
        with:
          name: hotpath-results-\${{ strategy.job-index }}
          path: hotpath-results
`;
}

/**
 * The reporting workflow: on workflow_run of "hotpath", runs no code of the pull request
 * (works for forks too), downloads the results and writes the sticky comment.
 */
export function reportWorkflow(): string {
  return `# Comments the results of the hotpath workflow on the pull request. Triggered by
# workflow_run, it runs the base branch's workflow and no code from the pull request, so
# it may hold a write token — also for pull requests from forks.
name: hotpath report
on:
  workflow_run:
    workflows: [hotpath]
    types: [completed]
permissions:
  pull-requests: write
  actions: read
jobs:
  report:
    if: github.event.workflow_run.event == 'pull_request'
    runs-on: ubuntu-latest
    steps:
      - uses: ${DOWNLOAD}
        with:
          pattern: hotpath-results-*
          path: hotpath-results
          run-id: \${{ github.event.workflow_run.id }}
          github-token: \${{ github.token }}
      - uses: hotpath-dev/hotpath@v0
        with:
          mode: report
`;
}

/** The command that installs a devDependency with the project's package manager. */
export function installCommand(packageManager: PackageManager, spec: string): [string, string[]] {
  switch (packageManager) {
    case 'pnpm':
      return ['pnpm', ['add', '--save-dev', spec]];
    case 'yarn':
      return ['yarn', ['add', '--dev', spec]];
    case 'bun':
      return ['bun', ['add', '--dev', spec]];
    default:
      return ['npm', ['install', '--save-dev', spec]];
  }
}

/** How to run the hotpath bin in this project. */
export function runCommand(packageManager: PackageManager): string {
  return packageManager === 'npm'
    ? 'npx hotpath'
    : `${packageManager === 'bun' ? 'bunx' : packageManager} hotpath`;
}
