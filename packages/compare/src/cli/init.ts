import { createRequire } from 'node:module';
import { createInterface } from 'node:readline/promises';
import {
  budgetNote,
  detectProject,
  initProject,
  installCommand,
  type Project,
  printable,
  serviceImage,
  startCommand,
} from '../internal.js';
import type { InitOptions } from './args.js';
import { initSlo, UsageError } from './args.js';

function ownVersion(): string {
  const require = createRequire(import.meta.url);
  for (const candidate of ['../../package.json', '../package.json']) {
    try {
      const pkg = require(candidate) as { name?: string; version?: string };
      if (pkg.name === '@hotpath/compare' && pkg.version) return pkg.version;
    } catch {
      // try the next
    }
  }
  return '0.0.0';
}

/** Asks on a terminal; with stdin not a terminal (CI, a pipe) takes the default and asks nothing. */
async function ask(question: string, fallback: string): Promise<string> {
  if (!process.stdin.isTTY) return fallback;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    // The default may come from the repository (its start script, its routes): shown escaped.
    const answer = (await rl.question(`${question} [${printable(fallback)}] `)).trim();
    return answer === '' ? fallback : answer;
  } finally {
    rl.close();
  }
}

/** How many left-out routes are named one by one. */
const LEFT_OUT_SHOWN = 12;

/** What init found, one line each; every text from the repository made printable. */
export function describeProject(project: Project): string[] {
  const p = (text: string) => printable(text);
  const { routeChoice: choice, data } = project;
  const files = new Set(project.routes.map((r) => r.file)).size;
  const lines = [
    `package manager: ${project.packageManager}${project.lockfile ? ` (${project.lockfile})` : ''}`,
    ...(project.framework ? [`framework: ${p(project.framework)}`] : []),
    ...(project.start ? [`start: ${p(project.start)} (from ${p(project.startFrom ?? '')})`] : []),
    ...(project.devServer
      ? [
          `start: package.json "start" runs ${p(project.devServer)}, a development server (watching, rebuilding): pass --start with the command that runs the built server, e.g. "node dist/main.js"`,
        ]
      : []),
    ...(project.build
      ? [`build: ${p(project.build)} (package.json "build"), run in each checkout after install`]
      : []),
    project.portVariable
      ? `port: the server reads $${p(project.portVariable)}${project.portVariable === 'PORT' ? '' : ", set from hotpath's $PORT"}`
      : 'port: no process.env.…PORT read found; hotpath gives the server its port in $PORT',
    `GET routes found: ${project.routes.length}${project.routes.length > 0 ? ` (registered in ${files} ${files === 1 ? 'file' : 'files'}, mounted routers followed)` : ''}`,
    `routes written: ${choice.chosen.length > 0 ? choice.chosen.map(p).join(', ') : 'none found'}`,
    ...[...choice.filled].map(([route, url]) => `${p(url)} is ${p(route)} with a value the seed writes`),
    ...choice.leftOut.slice(0, LEFT_OUT_SHOWN).map((l) => `left out: ${p(l.path)} — ${p(l.why)}`),
    ...(choice.leftOut.length > LEFT_OUT_SHOWN
      ? [`left out: ${choice.leftOut.length - LEFT_OUT_SHOWN} more`]
      : []),
  ];
  lines.push(...describeProtocol(project));
  if (data.stores.length > 0) {
    const one = data.stores.length === 1;
    lines.push(
      `database and cache: ${data.stores.map((s) => `${s.kind} (${s.evidence.map(p).join('; ')})`).join(', ')}`,
      `the measure job starts ${data.stores.map((s) => serviceImage(s.kind)).join(', ')} as ${one ? 'a service container' : 'service containers'}, pinned by tag: TODO pin ${one ? 'it' : 'each'} by digest (docker buildx imagetools inspect IMAGE) in .github/workflows/hotpath.yml`,
    );
  }
  for (const note of data.notes) lines.push(`database: ${p(note)}`);
  if (data.variables.length > 0)
    lines.push(
      `variables set for both sides (job env, passed by name with the hotpath step's env input): ${data.variables.map((v) => `${p(v.name)}=${p(v.value)} (${p(v.because)})`).join(', ')}`,
    );
  if (data.setup.length > 0) {
    lines.push(
      `migrate and seed, once before measuring, in the pull request's checkout: ${data.setup.map((s) => `${p(s.command)} (${p(s.from)})`).join('; ')}`,
      "assumed: both sides share one database; the pull request's migrations are applied before any round, so head runs on its schema and base on head's schema (a migration base cannot run on fails base's rounds); locally, hotpath compare uses the database your variables point at, as it is",
    );
  } else if (data.stores.length > 0)
    lines.push(
      'no migrate or seed command found (no such package.json script, no Prisma/Knex/Sequelize migrations): the database starts empty; add a step before hotpath if the server needs a schema',
    );
  return lines;
}

/** What init found the server speaks beside HTTP/1.1, and what it writes for it. */
function describeProtocol(project: Project): string[] {
  const p = (text: string) => printable(text);
  const { http2, grpc } = project.protocol;
  if (grpc) {
    const shown = grpc.methods.slice(0, 5);
    return [
      grpc.methods.length > 0
        ? `gRPC (${p(grpc.evidence)}): ${grpc.methods.length} unary method(s) in .proto files; written: ${shown.map((m) => `${p(m.path)} (${p(m.file)})`).join(', ')}, each with its .proto and an empty request message: fill a scenario's "message" (JSON) with a real request`
        : `gRPC (${p(grpc.evidence)}), but no .proto service found: add a scenario with url "/package.Service/Method", "grpc": true and its message's bytes in base64 as "body"`,
      ...(grpc.streaming.length > 0
        ? [
            `left out: ${grpc.streaming.slice(0, 5).map(p).join(', ')} — streaming methods (hotpath measures unary calls)`,
          ]
        : []),
    ];
  }
  if (http2)
    return [
      `protocol: HTTP/2 ${http2.tls ? 'over TLS (ALPN h2; a self-signed certificate is accepted), routes written as https:// URLs' : '(h2c, prior knowledge)'} — ${p(http2.evidence)}; the config sets "http2": true`,
    ];
  return [];
}

const cleanInstallHint = (project: Project): string =>
  project.packageManager === 'npm' ? 'npm install' : `${project.packageManager} install`;

/** `hotpath init`: detect, ask (on a terminal) or guess, write, print the next command. */
export async function runInit(options: InitOptions, dir: string = process.cwd()): Promise<number> {
  const project = detectProject(dir);
  const err = (line: string) => process.stderr.write(`${line}\n`);
  for (const line of describeProject(project)) err(`hotpath init: ${line}`);
  const detected = options.start ?? startCommand(project);
  const start =
    options.start ?? (detected ? await ask('Command that starts your server:', detected) : undefined);
  if (!start)
    throw new UsageError(
      `no start command found in ${printable(dir)} (no package.json "start", no server.js or index.js): pass --start CMD`,
    );
  let routes = options.urls;
  if (routes.length === 0) {
    const methods = (project.protocol.grpc?.methods ?? []).slice(0, 5).map((m) => m.path);
    const chosen = methods.length > 0 ? methods : project.routeChoice.chosen;
    const guess = chosen.length > 0 ? chosen.join(',') : '/';
    routes = (await ask('Routes to measure (comma separated):', guess))
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean);
  }
  for (const url of routes)
    if (!url.startsWith('/') || /\s/.test(url))
      throw new UsageError(
        `invalid route ${printable(JSON.stringify(url))}: expected a path starting with "/"`,
      );
  const slo =
    options.slo ??
    initSlo(
      await ask("An SLO for each route's capacity, e.g. p99<=50ms (none: no capacity search):", 'none'),
    );
  const version = ownVersion();
  // Installing runs the repository's code (.pnpmfile.cjs, yarn's yarnPath, install scripts):
  // only when asked on a terminal and answered yes; otherwise package.json gets the line.
  const [pm, pmArgs] = installCommand(project.packageManager, `@hotpath/compare@^${version}`);
  const install =
    options.install &&
    process.stdin.isTTY &&
    /^y(es)?$/i.test(
      await ask(
        `Run \`${[pm, ...pmArgs].join(' ')}\` now? It runs this repository's package manager and its code (.pnpmfile.cjs, yarnPath, install scripts) (y/N):`,
        'N',
      ),
    );
  const result = await initProject(project, {
    start,
    routes,
    ...(slo ? { slo } : {}),
    force: options.force,
    install,
    versionRange: `^${version}`,
  });
  for (const name of result.written) err(`hotpath init: wrote ${name}`);
  const budget = budgetNote(routes.length, slo !== undefined);
  if (budget !== undefined && result.written.includes('hotpath.config.json')) err(`hotpath init: ${budget}`);
  if (result.gitignore) err('hotpath init: added hotpath-report/ (where runs write) to .gitignore');
  for (const name of result.kept) err(`hotpath init: kept ${name} (it exists; --force overwrites it)`);
  let code = 0;
  if (result.dependency === 'installed') err('hotpath init: installed @hotpath/compare as a devDependency');
  else if (result.dependency === 'written')
    err(
      `hotpath init: added @hotpath/compare ^${version} to package.json's devDependencies without running ${project.packageManager} (it would run this repository's code: .pnpmfile.cjs, yarnPath, install scripts); install it yourself: ${cleanInstallHint(project)}`,
    );
  else if (typeof result.dependency === 'object') {
    err(
      `hotpath init: installing @hotpath/compare failed (${result.dependency.failed}); run: ${result.dependency.command}`,
    );
    code = 1;
  }
  process.stdout.write(
    `Next: ${result.next}   # measures ${result.nextMeasures}\nThen commit hotpath.config.json and .github/workflows/hotpath*.yml: pull requests get a comment.\n`,
  );
  return code;
}
