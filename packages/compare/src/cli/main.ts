import { createRequire } from 'node:module';
import { HotpathCompareError } from '../errors.js';
import { printable } from '../printable.js';
import { parseCommandLine, UsageError, usage } from './args.js';

function version(): string {
  const require = createRequire(import.meta.url);
  for (const candidate of ['../../package.json', '../package.json']) {
    try {
      const pkg = require(candidate) as { name?: string; version?: string };
      if (pkg.name === '@hotpath/compare') return pkg.version ?? '0.0.0';
    } catch {
      // try the next
    }
  }
  return '0.0.0';
}

/** Runs the CLI; resolves with the exit status. Never calls process.exit. */
export async function main(argv: string[], signal?: AbortSignal): Promise<number> {
  const parsed = parseCommandLine(argv);
  if (parsed.command === 'help') {
    // `hotpath` alone is a usage error: the usage goes to stderr, exit 2.
    if (argv.length === 0) {
      process.stderr.write(usage());
      return 2;
    }
    process.stdout.write(usage(parsed.topic));
    return 0;
  }
  if (parsed.command === 'version') {
    process.stdout.write(`hotpath ${version()}\n`);
    return 0;
  }
  // the engine's modules, only now: help and version above load none of them
  const { runCommand } = await import('./commands.js');
  return runCommand(parsed, signal);
}

/** The `hotpath` bin: SIGINT/SIGTERM abort the run (everything is cleaned up), then exit 130/143. */
export function runCli(argv: string[] = process.argv.slice(2)): void {
  const controller = new AbortController();
  let interrupted = 0;
  const onSignal = (name: 'SIGINT' | 'SIGTERM') => () => {
    if (interrupted) process.exit(name === 'SIGINT' ? 130 : 143); // a second signal: stop now
    interrupted = name === 'SIGINT' ? 130 : 143;
    process.stderr.write(`\nhotpath: ${name}: stopping the servers and removing worktrees…\n`);
    controller.abort(new Error(name));
  };
  process.on('SIGINT', onSignal('SIGINT'));
  process.on('SIGTERM', onSignal('SIGTERM'));
  main(argv, controller.signal).then(
    (code) => {
      process.exitCode = interrupted || code;
    },
    (err: unknown) => {
      if (interrupted) {
        process.exitCode = interrupted;
      } else if (err instanceof UsageError) {
        process.stderr.write(`hotpath: ${err.message}\n`);
        process.exitCode = 2;
      } else if (err instanceof HotpathCompareError) {
        process.stderr.write(`hotpath: ${err.code}: ${err.message}\n`);
        process.exitCode = [
          'HP_COMPARE_INVALID_SETTING',
          'HP_COMPARE_CONFIG',
          'HP_COMPARE_BISECT_RANGE',
        ].includes(err.code)
          ? 2
          : 1;
      } else {
        process.stderr.write(
          `hotpath: unexpected failure: ${printable((err as Error)?.stack ?? String(err), { newlines: true })}\n`,
        );
        process.exitCode = 1;
      }
    },
  );
}
