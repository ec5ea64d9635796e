#!/usr/bin/env node
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  addWorktree,
  defaultBase,
  gitRoot,
  installPlan,
  mapIntoCheckout,
  prepareCheckout,
  removeWorktree,
  resolveCommit,
} from './checkout.js';
import { measureOne } from './compare.js';
import { type CompareOutcome, compare, probePath } from './engine.js';
import { HotpathActionError } from './errors.js';
import { renderMarkdown } from './markdown.js';
import { parseSettings, type RawInputs } from './options.js';
import { renderTerminal } from './terminal.js';

const USAGE = `hotpath: load-test and profile a Node.js server, base vs head

Usage:
  hotpath compare --start CMD [--base REF] [--head REF] [options]
  hotpath compare --base-start CMD --head-start CMD [options]
  hotpath profile --start CMD [options]

Sides:
  --start CMD           command that starts the server (must listen on $PORT), for both sides
  --base REF            base ref, checked out with git worktree (default: merge-base with the default branch)
  --head REF            head ref (default: the working tree as it is)
  --base-start CMD      base's start command, in the same tree (no git)
  --head-start CMD      head's start command, in the same tree
  --cwd DIR             app directory (default: .)
  --install CMD         install command for worktrees (default: detected from the lockfile; "none" skips)
  --build CMD           build command run in worktrees after install
  --setup-command CMD   run after the server is ready, before load (HOTPATH_URL is set)
  --ready-timeout S     seconds to wait for the port to accept connections (default 30)

Load:
  --url PATH|URL        path on http://127.0.0.1:$PORT or a full URL (default /)
  --duration S          measured seconds per round (default 10)
  --warmup S            warm-up seconds per round (default 3)
  --rounds N            rounds per side, interleaved B H B H (default 3)
  --connections N       concurrent connections (default 50)
  --pipelining N        requests in flight per connection (default 1)
  --rate R              fixed request rate (open model)
  --method M            HTTP method (default GET)
  --header "N: v"       request header (repeatable)
  --body TEXT           request body

Verdict and output:
  --profiler P          cpuprofile (default), prof (node --prof) or none
  --threshold PCT       relative change that counts as a regression (default 10)
  --hot-threshold PTS   self-time growth that flags a function (default 5)
  --fail-on-regression  exit 1 when a metric regressed
  --out DIR             where report.json, report.md, folded stacks, flame graphs go (default hotpath-report)
  --json                print the report JSON instead of the terminal report
  --markdown FILE       also write the markdown report to FILE
  --help                this text

Commands run through /bin/sh -c with PORT set; tokens and secrets are removed from their environment.
`;

const OPTIONS = {
  start: { type: 'string' },
  base: { type: 'string' },
  head: { type: 'string' },
  'base-start': { type: 'string' },
  'head-start': { type: 'string' },
  cwd: { type: 'string' },
  install: { type: 'string' },
  build: { type: 'string' },
  'setup-command': { type: 'string' },
  'ready-timeout': { type: 'string' },
  url: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  rounds: { type: 'string' },
  connections: { type: 'string' },
  pipelining: { type: 'string' },
  rate: { type: 'string' },
  method: { type: 'string' },
  header: { type: 'string', multiple: true },
  body: { type: 'string' },
  profiler: { type: 'string' },
  threshold: { type: 'string' },
  'hot-threshold': { type: 'string' },
  'fail-on-regression': { type: 'boolean' },
  out: { type: 'string' },
  json: { type: 'boolean' },
  markdown: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

function progress(): { log: (line: string) => void; done: () => void } {
  const tty = process.stderr.isTTY;
  if (!tty) return { log: () => {}, done: () => {} };
  return {
    log: (line) => process.stderr.write(`\r\u001b[2K${line.slice(0, (process.stderr.columns ?? 100) - 1)}`),
    done: () => process.stderr.write('\r\u001b[2K'),
  };
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  if (command !== 'compare' && command !== 'profile') {
    throw new UsageError(
      `unknown command ${JSON.stringify(command)}: expected compare or profile (see hotpath --help)`,
    );
  }
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    values = parseArgs({ args: rest, options: OPTIONS, allowPositionals: false, strict: true }).values;
  } catch (err) {
    throw new UsageError(`${(err as Error).message.split('\n')[0]} (see hotpath --help)`);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const cwd = resolve((values.cwd as string | undefined) ?? '.');
  const twoCommands = values['base-start'] !== undefined || values['head-start'] !== undefined;
  if (command === 'compare' && twoCommands && (!values['base-start'] || !values['head-start'])) {
    throw new UsageError('--base-start and --head-start go together: give both commands');
  }
  if (twoCommands && (values.base || values.head)) {
    throw new UsageError('--base/--head (refs) and --base-start/--head-start (commands) exclude each other');
  }
  const raw: RawInputs = {
    start: (values.start as string | undefined) ?? (values['head-start'] as string | undefined),
    url: values.url as string | undefined,
    'setup-command': values['setup-command'] as string | undefined,
    install: values.install as string | undefined,
    build: values.build as string | undefined,
    connections: values.connections as string | undefined,
    duration: values.duration as string | undefined,
    warmup: values.warmup as string | undefined,
    rounds: values.rounds as string | undefined,
    pipelining: values.pipelining as string | undefined,
    rate: values.rate as string | undefined,
    method: values.method as string | undefined,
    headers: ((values.header as string[] | undefined) ?? []).join('\n'),
    body: values.body as string | undefined,
    profiler: values.profiler as string | undefined,
    threshold: values.threshold as string | undefined,
    'hot-threshold': values['hot-threshold'] as string | undefined,
    'fail-on-regression': values['fail-on-regression'] ? 'true' : 'false',
    'ready-timeout': values['ready-timeout'] as string | undefined,
  };
  if (!raw.start)
    throw new UsageError(
      'missing --start CMD (or --base-start and --head-start): the command that starts your server',
    );
  const settings = parseSettings(raw, 'flag');
  const outDir = resolve((values.out as string | undefined) ?? 'hotpath-report');
  const ui = progress();
  probePath();

  if (command === 'profile') {
    const rounds = await measureOne({ side: 'head', command: settings.start, cwd }, settings, {
      probePath: probePath(),
      env: process.env,
      log: ui.log,
    });
    ui.done();
    const { writeProfileOnly } = await import('./profile-report.js');
    const written = writeProfileOnly(outDir, rounds, settings);
    process.stdout.write(values.json ? `${JSON.stringify(written.summary, null, 2)}\n` : written.text);
    process.stderr.write(`files: ${written.dir}\n`);
    return 0;
  }

  const cleanups: (() => Promise<void>)[] = [];
  let outcome: CompareOutcome;
  try {
    if (twoCommands) {
      outcome = await compare({
        base: { side: 'base', command: values['base-start'] as string, cwd },
        head: { side: 'head', command: values['head-start'] as string, cwd },
        settings,
        outDir,
        sides: {
          base: { command: values['base-start'] as string, cwd },
          head: { command: values['head-start'] as string, cwd },
        },
        log: ui.log,
      });
    } else {
      const root = await gitRoot(cwd);
      const baseSha = values.base
        ? await resolveCommit(root, values.base as string)
        : await defaultBase(root);
      const checkouts: Record<'base' | 'head', string> = { base: cwd, head: cwd };
      const shas: Record<'base' | 'head', string | undefined> = { base: baseSha, head: undefined };
      const temp = mkdtempSync(join(tmpdir(), 'hotpath-worktrees-'));
      cleanups.push(async () => rmSync(temp, { recursive: true, force: true }));
      for (const side of ['base', 'head'] as const) {
        const ref = side === 'base' ? baseSha : (values.head as string | undefined);
        if (!ref) continue;
        const sha = side === 'base' ? baseSha : await resolveCommit(root, ref);
        shas[side] = sha;
        const tree = join(temp, side);
        ui.log(`${side}: git worktree ${sha.slice(0, 12)}`);
        await addWorktree(root, sha, tree);
        cleanups.unshift(() => removeWorktree(root, tree));
        const appDir = mapIntoCheckout(root, cwd, tree);
        checkouts[side] = appDir;
        const steps: { label: 'install' | 'build'; command: string; cwd: string }[] = [];
        const install = installPlan(settings.install, appDir, tree);
        if (install) steps.push({ label: 'install', ...install });
        if (settings.build) steps.push({ label: 'build', command: settings.build, cwd: appDir });
        await prepareCheckout(side, steps, process.env, ui.log);
      }
      outcome = await compare({
        base: { side: 'base', command: settings.start, cwd: checkouts.base },
        head: { side: 'head', command: settings.start, cwd: checkouts.head },
        settings,
        outDir,
        sides: {
          base: {
            command: settings.start,
            cwd: checkouts.base,
            ref: values.base as string | undefined,
            sha: shas.base,
          },
          head: {
            command: settings.start,
            cwd: checkouts.head,
            ref: (values.head as string | undefined) ?? 'working tree',
            sha: shas.head,
          },
        },
        log: ui.log,
      });
    }
  } finally {
    ui.done();
    for (const cleanup of cleanups) await cleanup();
  }
  const { report, files } = outcome;
  if (values.markdown) writeFileSync(resolve(values.markdown as string), renderMarkdown(report));
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else process.stdout.write(renderTerminal(report, { color: process.stdout.isTTY && !process.env.NO_COLOR }));
  const written = [
    files.report,
    files.markdown,
    files.folded.base,
    files.folded.head,
    files.flameGraph,
    files.diffFlameGraph,
  ]
    .filter(Boolean)
    .map((f) => `  ${f}`);
  process.stderr.write(`\nfiles in ${files.dir}:\n${written.join('\n')}\n`);
  for (const note of files.notes) process.stderr.write(`note: ${note}\n`);
  return report.regressed && settings.failOnRegression ? 1 : 0;
}

// Ctrl-C / SIGTERM: exit through 'exit' so every running server's process group is killed.
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`hotpath: ${err.message}\n`);
      process.exitCode = 2;
    } else if (err instanceof HotpathActionError) {
      process.stderr.write(`hotpath: ${err.code}: ${err.message}\n`);
      process.exitCode = err.code === 'HP_ACTION_INVALID_INPUT' ? 2 : 1;
    } else {
      process.stderr.write(`hotpath: unexpected failure: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exitCode = 1;
    }
  },
);
