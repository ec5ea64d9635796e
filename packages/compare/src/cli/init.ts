import { createRequire } from 'node:module';
import { createInterface } from 'node:readline/promises';
import { detectProject, initProject, type Project, startCommand } from '../internal.js';
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
    const answer = (await rl.question(`${question} [${fallback}] `)).trim();
    return answer === '' ? fallback : answer;
  } finally {
    rl.close();
  }
}

function describeProject(project: Project): string[] {
  return [
    `package manager: ${project.packageManager}${project.lockfile ? ` (${project.lockfile})` : ''}`,
    ...(project.framework ? [`framework: ${project.framework}`] : []),
    ...(project.start ? [`start: ${project.start} (from ${project.startFrom})`] : []),
    project.portVariable
      ? `port: the server reads $${project.portVariable}${project.portVariable === 'PORT' ? '' : ", set from hotpath's $PORT"}`
      : 'port: no process.env.…PORT read found; hotpath gives the server its port in $PORT',
    `routes found: ${project.routes.length > 0 ? project.routes.join(', ') : 'none'}`,
    ...(project.paramRoutes.length > 0
      ? [
          `left out (path parameters): ${project.paramRoutes.join(', ')}; add one with a real value to hotpath.config.json's scenarios`,
        ]
      : []),
  ];
}

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
      `no start command found in ${dir} (no package.json "start", no server.js or index.js): pass --start CMD`,
    );
  let routes = options.urls;
  if (routes.length === 0) {
    const guess = project.routes.length > 0 ? project.routes.slice(0, 3).join(',') : '/';
    routes = (await ask('Routes to measure (comma separated):', guess))
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean);
  }
  for (const url of routes)
    if (!url.startsWith('/') || /\s/.test(url))
      throw new UsageError(`invalid route ${JSON.stringify(url)}: expected a path starting with "/"`);
  const slo =
    options.slo ??
    initSlo(
      await ask("An SLO for each route's capacity, e.g. p99<=50ms (none: no capacity search):", 'none'),
    );
  const version = ownVersion();
  const result = await initProject(project, {
    start,
    routes,
    ...(slo ? { slo } : {}),
    force: options.force,
    install: options.install,
    versionRange: `^${version}`,
  });
  for (const name of result.written) err(`hotpath init: wrote ${name}`);
  if (result.gitignore) err('hotpath init: added hotpath-report/ (where runs write) to .gitignore');
  for (const name of result.kept) err(`hotpath init: kept ${name} (it exists; --force overwrites it)`);
  let code = 0;
  if (result.dependency === 'installed') err('hotpath init: installed @hotpath/compare as a devDependency');
  else if (result.dependency === 'written')
    err(`hotpath init: added @hotpath/compare ^${version} to devDependencies (not installed: --no-install)`);
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
