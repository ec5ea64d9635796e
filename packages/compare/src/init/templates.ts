import { budgetHolding, PAIRS_BUDGETED, pairSeconds as pairCostOf } from '../settings/budget.js';
import { settingDefault } from '../settings/table.js';
import type { PackageManager } from './detect.js';
import type { Protocol } from './protocol.js';
import type { DataNeeds, StoreKind } from './stores.js';

/** One pair of rounds of `scenarios` routes at the defaults (settings/budget.ts). */
export function pairSeconds(scenarios: number, slo: boolean): number {
  const warmup = Number(settingDefault('warmup'));
  const duration = Number(settingDefault('duration'));
  return pairCostOf(scenarios, slo ? scenarios : 0, warmup, duration);
}

/**
 * The `maxTime` init writes (seconds, whole minutes) when the default budget would not hold
 * PAIRS_BUDGETED pairs of the written scenarios; undefined when it does. With five routes the
 * default 180 s held one pair: every route inconclusive on every pull request.
 */
export function budgetFor(scenarios: number, slo: boolean): number | undefined {
  const needed = budgetHolding(pairSeconds(scenarios, slo));
  return needed > Number(settingDefault('maxTime')) ? needed : undefined;
}

/** What init says of the budget it wrote (undefined: it wrote none). */
export function budgetNote(scenarios: number, slo: boolean): string | undefined {
  const budget = budgetFor(scenarios, slo);
  if (budget === undefined) return undefined;
  const pair = pairSeconds(scenarios, slo);
  const fallback = Number(settingDefault('maxTime'));
  return `budget: maxTime ${budget} s in hotpath.config.json — ${scenarios} scenarios take some ${Math.round(pair)} s a pair of rounds at the defaults; the first look is at 3 pairs, a change near the threshold takes up to ${PAIRS_BUDGETED}, and the default ${fallback} s holds ${Math.floor(fallback / pair)}; fewer scenarios, a shorter budget`;
}

/**
 * hotpath.config.json: the start command, one scenario per route and, when given, the SLO every
 * scenario's capacity is searched at (its canonical text); a budget (`maxTime`) when the default
 * would not hold enough pairs of them (budgetFor); every other setting default. A route
 * that is one of the server's gRPC methods is a gRPC scenario (its .proto, an empty message to
 * fill); an
 * HTTP/2 server gets `http2: true`, over TLS each route as an https:// URL.
 */
export function configFile(
  start: string,
  routes: readonly string[],
  slo?: string,
  build?: string,
  protocol: Protocol = {},
): string {
  const grpc = new Map((protocol.grpc?.methods ?? []).map((m) => [m.path, m.file]));
  const tls = protocol.http2?.tls === true;
  const maxTime = budgetFor(routes.length, slo !== undefined);
  const config = {
    $schema: './node_modules/@hotpath/compare/hotpath.config.schema.json',
    start,
    ...(build ? { build } : {}),
    ...(slo ? { slo } : {}),
    ...(maxTime ? { maxTime } : {}),
    ...(protocol.http2 ? { http2: true } : {}),
    scenarios: routes.map((url) =>
      grpc.has(url)
        ? { name: url, url, grpc: true, proto: grpc.get(url), message: {} }
        : { name: url, url: tls ? `https://127.0.0.1:$PORT${url}` : url },
    ),
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

const CHECKOUT = 'actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1';
const SETUP_NODE = 'actions/setup-node@820762786026740c76f36085b0efc47a31fe5020 # v7.0.0';
const UPLOAD = 'actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f # v7.0.0';
const DOWNLOAD = 'actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1';

/**
 * The service container of each store, by tag. Not by digest: init is written offline and a
 * digest it cannot verify would be invented; the written workflow and init's output say to pin it.
 */
const SERVICES: Record<
  StoreKind,
  { name: string; image: string; env: [string, string][]; port: string; health: string }
> = {
  postgres: {
    name: 'postgres',
    image: 'postgres:17',
    env: [
      ['POSTGRES_USER', 'hotpath'],
      ['POSTGRES_PASSWORD', 'hotpath'],
      ['POSTGRES_DB', 'hotpath'],
    ],
    port: '5432',
    health: 'pg_isready -U hotpath',
  },
  mysql: {
    name: 'mysql',
    image: 'mysql:8.4',
    env: [
      ['MYSQL_ROOT_PASSWORD', 'hotpath'],
      ['MYSQL_DATABASE', 'hotpath'],
    ],
    port: '3306',
    health: 'mysqladmin ping -h 127.0.0.1 -photpath',
  },
  mongodb: {
    name: 'mongodb',
    image: 'mongo:8',
    env: [],
    port: '27017',
    health: "mongosh --quiet --eval 'db.runCommand({ ping: 1 })'",
  },
  redis: { name: 'redis', image: 'redis:7', env: [], port: '6379', health: 'redis-cli ping' },
  memcached: { name: 'memcached', image: 'memcached:1.6', env: [], port: '11211', health: '' },
};

/** The image each store's service runs, as written into the workflow (a tag: pin it). */
export const serviceImage = (kind: StoreKind): string => SERVICES[kind].image;

/** A YAML double-quoted scalar (JSON's escapes are YAML's). */
const yamlString = (text: string): string => JSON.stringify(text);

function servicesBlock(needs: DataNeeds): string {
  if (needs.stores.length === 0) return '';
  const lines = ['    services:'];
  for (const { kind } of needs.stores) {
    const s = SERVICES[kind];
    lines.push(`      ${s.name}:`);
    lines.push(
      `        image: ${s.image} # TODO: pin by digest: docker buildx imagetools inspect ${s.image}`,
    );
    if (s.env.length > 0) {
      lines.push('        env:');
      for (const [k, v] of s.env) lines.push(`          ${k}: ${v}`);
    }
    lines.push(`        ports: ['${s.port}:${s.port}']`);
    if (s.health)
      lines.push(
        `        options: >-\n          --health-cmd ${yamlString(s.health)} --health-interval 2s --health-timeout 5s --health-retries 30`,
      );
  }
  return `${lines.join('\n')}\n`;
}

function envBlock(needs: DataNeeds): string {
  if (needs.variables.length === 0) return '';
  const lines = [
    '    env: # set for both sides (the hotpath step passes them by name), and for the setup step',
  ];
  for (const v of needs.variables) lines.push(`      ${v.name}: ${yamlString(v.value)}`);
  return `${lines.join('\n')}\n`;
}

/** The command that installs the checkout's dependencies from its lockfile. */
export function cleanInstall(packageManager: PackageManager, lockfile: boolean): string {
  if (!lockfile) return packageManager === 'npm' ? 'npm install' : `${packageManager} install`;
  return packageManager === 'npm' ? 'npm ci' : `${packageManager} install --frozen-lockfile`;
}

function setupStep(needs: DataNeeds, install: string): string {
  if (needs.setup.length === 0) return '';
  const run = [install, ...needs.setup.map((s) => s.command)].map((c) => `          ${c}`).join('\n');
  return `      # Both sides share this database. The pull request's migrations are applied once, here,
      # before any round: head runs on its own schema and base on head's schema (a migration
      # base cannot run on — a dropped or renamed column — fails base's rounds: say so in the PR).
      - name: Migrate and seed the database (the pull request's migrations, once)
        run: |
${run}
`;
}

/**
 * The measuring workflow: on pull_request, a read-only token, no credentials left in
 * .git/config; the results go up as an artifact for the report workflow. With `needs`, a
 * service container per store, the variables that point the server at them (passed to both
 * sides by name), and a step that migrates and seeds the database once before measuring.
 */
export function measureWorkflow(packageManager: PackageManager, needs?: DataNeeds, lockfile = true): string {
  const setupPnpm =
    packageManager === 'pnpm' ? `      - run: corepack enable # pnpm, as the lockfile says\n` : '';
  const passEnv =
    needs && needs.variables.length > 0
      ? `          env: ${needs.variables.map((v) => v.name).join(',')}\n`
      : '';
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
${needs ? servicesBlock(needs) + envBlock(needs) : ''}    steps:
      - uses: ${CHECKOUT}
        with:
          fetch-depth: 0 # the base commit must be reachable for the base checkout
          persist-credentials: false
      - uses: ${SETUP_NODE}
        with:
          node-version: 24
          package-manager-cache: false
${setupPnpm}${needs ? setupStep(needs, cleanInstall(packageManager, lockfile)) : ''}      - uses: hotpath-dev/hotpath@v0
        with:
          mode: measure
          config: hotpath.config.json
          github-token: '' # no token in the step whose environment the PR's code can read
${passEnv}      - uses: ${UPLOAD}
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
    timeout-minutes: 10
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
