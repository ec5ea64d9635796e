import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type WrittenFiles, writeArtifacts } from './artifacts.js';
import { type ComparisonPlan, type Measurements, measure } from './compare.js';
import { analyse, type Report, type SideInfo, type SourceLinks } from './report.js';
import type { RoundContext } from './round.js';

/** Where dist/probe.cjs is, from the bundle (dist/), the library build (dist/lib/) or the sources. */
export function probePath(): string {
  for (const candidate of ['./probe.cjs', '../probe.cjs', '../dist/probe.cjs']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('dist/probe.cjs is missing: run the package build (pnpm --filter @hotpath/action build)');
}

export interface CompareRequest extends ComparisonPlan {
  /** Output directory for report.json, report.md, folded stacks and flame graphs. */
  outDir: string;
  sides: { base: SideInfo; head: SideInfo };
  links?: SourceLinks;
  warnings?: string[];
  env?: NodeJS.ProcessEnv;
  extraEnv?: Record<string, string>;
  log?: (line: string) => void;
}

export interface CompareOutcome {
  report: Report;
  measurements: Measurements;
  files: WrittenFiles;
}

/** The whole main flow after checkouts: measure interleaved rounds, analyse, write files. */
export async function compare(request: CompareRequest): Promise<CompareOutcome> {
  const context: RoundContext = {
    probePath: probePath(),
    env: request.env ?? process.env,
    extraEnv: request.extraEnv,
    log: request.log,
  };
  const measurements = await measure(request, context);
  const report = analyse(measurements, {
    settings: request.settings,
    sides: request.sides,
    links: request.links,
    warnings: request.warnings,
  });
  const files = writeArtifacts(request.outDir, report, measurements);
  return { report, measurements, files };
}
