// Runs `hotpath compare` (the workspace's built CLI, see hotpath-cli.js) on an example, briefly,
// and returns the report JSON. Shared by the examples' story tests.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hotpathCli } from './hotpath-cli.js';

const cli = hotpathCli();

export async function compareBriefly({ cwd, baseStart, headStart, args, timeout = 120_000 }) {
  if (!cli) throw new Error('no dependency of examples/test-support provides the `hotpath` bin');
  const out = mkdtempSync(join(tmpdir(), 'hotpath-example-'));
  try {
    const argv = [cli, 'compare', '--cwd', cwd, '--base-start', baseStart, '--head-start', headStart];
    argv.push('--duration', '2', '--warmup', '1', '--rounds', '2', '--out', out, ...args);
    await new Promise((resolve, reject) => {
      execFile(process.execPath, argv, { timeout }, (error, stdout, stderr) => {
        if (error) reject(new Error(`hotpath compare failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolve();
      });
    });
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    // Each side's whole profile as folded stacks (the report's rows are the top changes only).
    report.folded = {};
    for (const side of ['base', 'head'])
      if (existsSync(join(out, `${side}.folded`)))
        report.folded[side] = readFileSync(join(out, `${side}.folded`), 'utf8');
    // The stories have one scenario: its details read as the report's own.
    return { ...report, ...report.scenarios[0] };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Mean of a metric over the rounds of one side. */
export function sideMean(report, side, metric) {
  const rounds = report.rounds.filter((r) => r.side === side);
  return rounds.reduce((sum, r) => sum + r[metric], 0) / rounds.length;
}

/** Self-time share of the functions whose name, or whose caller's name, matches. */
export function shareOf(report, side, pattern) {
  const key = side === 'base' ? 'baseShare' : 'headShare';
  return report.hotFunctions.rows
    .filter((row) => pattern.test(row.name) || (row.caller && pattern.test(row.caller.name)))
    .reduce((sum, row) => sum + row[key], 0);
}

/**
 * Share of one side's busy samples (all but "(idle)") whose stack has a frame matching `pattern`,
 * from its whole profile (folded stacks): for a side that is mostly idle, whose functions are too
 * small to reach the report's top rows.
 */
export function busyShareOf(report, side, pattern) {
  let busy = 0;
  let matching = 0;
  for (const line of (report.folded?.[side] ?? '').split('\n')) {
    const at = line.lastIndexOf(' ');
    if (at < 0) continue;
    const stack = line.slice(0, at);
    const count = Number(line.slice(at + 1));
    if (stack === '(idle)' || !Number.isFinite(count)) continue;
    busy += count;
    if (stack.split(';').some((frame) => pattern.test(frame))) matching += count;
  }
  return busy > 0 ? matching / busy : 0;
}
