#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseCli, USAGE } from './cli-args.js';
import { LoadProgress } from './cli-progress.js';
import { describe, HotpathLoadError } from './errors.js';
import type { Tick } from './load-engine.js';
import { mergeResults, parseRunResult } from './merge.js';
import { decodeHistogram } from './recorder.js';
import type { RunResult } from './result.js';
import { createRun } from './run.js';
import { formatLatencyDistribution, formatSummary, noCompletionReason } from './summary.js';

function fail(message: string, code: number): never {
  process.stderr.write(`hotpath-load: ${message}\n`);
  process.exit(code);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

function merge(files: string[], json: boolean): void {
  const results: RunResult[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      fail(`cannot read ${describe(file)}: ${messageOf(error)}`, 2);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      fail(`${file} is not JSON: ${messageOf(error)}`, 2);
    }
    try {
      results.push(parseRunResult(value, file));
    } catch (error) {
      fail(messageOf(error), 2);
    }
  }
  const merged = mergeResults(results);
  process.stdout.write(json ? `${JSON.stringify(merged, null, 2)}\n` : formatSummary(merged));
}

async function main(): Promise<void> {
  let command: ReturnType<typeof parseCli>;
  try {
    command = parseCli(process.argv.slice(2));
  } catch (error) {
    fail(messageOf(error), 2);
  }
  if (command.kind === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command.kind === 'version') {
    process.stdout.write(`hotpath-load ${version()}\n`);
    return;
  }
  if (command.kind === 'merge') {
    merge(command.files, command.json);
    return;
  }
  let loadRun: ReturnType<typeof createRun>;
  try {
    loadRun = createRun(command.options);
  } catch (error) {
    fail(messageOf(error), 2);
  }
  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    loadRun.stop();
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigint);
  const { output } = command;
  const progress = output.progress
    ? new LoadProgress(process.stderr, {
        duration: loadRun.options.duration,
        amount: loadRun.options.amount,
        warmup: loadRun.options.warmup,
      })
    : undefined;
  if (progress) {
    loadRun.on('warmup', (tick: Tick) => progress.warmup(tick));
    loadRun.on('tick', (tick: Tick) => progress.tick(tick));
  }
  try {
    const result = await loadRun.result;
    progress?.finish();
    if (command.json) {
      const named = output.title === undefined ? result : { title: output.title, ...result };
      process.stdout.write(`${JSON.stringify(named, null, 2)}\n`);
    } else {
      process.stdout.write(formatSummary(result, output.title));
      if (output.latency) process.stdout.write(formatLatencyDistribution(decodeHistogram(result.histogram)));
    }
    if (interrupted) process.exitCode = 130;
    else if (result.requests.total === 0)
      fail(`no request completed: ${noCompletionReason(result, loadRun.options.timeout)}`, 1);
  } catch (error) {
    progress?.finish();
    if (error instanceof HotpathLoadError) fail(error.message, 1);
    fail(`run failed: ${messageOf(error)}`, 1);
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigint);
  }
}

void main();
