#!/usr/bin/env node
import { parseCli, USAGE } from './cli-args.js';
import { HotpathLoadError } from './errors.js';
import type { Tick } from './load-engine.js';
import { createRun } from './run.js';
import { formatProgress, formatSummary } from './summary.js';

function fail(message: string, code: number): never {
  process.stderr.write(`hotpath-load: ${message}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  if (process.argv[2] === '--version')
    return void process.stdout.write(
      `hotpath-load ${JSON.parse(process.getBuiltinModule('node:fs').readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`,
    );
  let command: ReturnType<typeof parseCli>;
  try {
    command = parseCli(process.argv.slice(2));
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), 2);
  }
  if (command.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  let loadRun: ReturnType<typeof createRun>;
  try {
    loadRun = createRun(command.options);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), 2);
  }
  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    loadRun.stop();
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);
  const progress = process.stderr.isTTY && !command.json;
  if (progress) {
    const total = loadRun.options.duration;
    loadRun.on('tick', (tick: Tick) => {
      process.stderr.write(`\r\x1b[2K${formatProgress(tick.second, tick.requests, tick.errors, total)}`);
    });
  }
  try {
    const result = await loadRun.result;
    if (progress) process.stderr.write('\r\x1b[2K');
    process.stdout.write(command.json ? `${JSON.stringify(result, null, 2)}\n` : formatSummary(result));
    if (interrupted) process.exitCode = 130;
  } catch (error) {
    if (progress) process.stderr.write('\n');
    if (error instanceof HotpathLoadError) fail(error.message, 1);
    fail(`run failed: ${error instanceof Error ? error.message : String(error)}`, 1);
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
  }
}

void main();
