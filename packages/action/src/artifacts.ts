import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { renderDiffFlameGraph, renderFlameGraph, toFolded } from '@hotpath/tick-parser';
import type { Measurements } from './compare.js';
import { renderMarkdown } from './markdown.js';
import { type Report, sideProfiles } from './report.js';

export interface WrittenFiles {
  dir: string;
  report: string;
  markdown: string;
  folded: { base?: string; head?: string };
  flameGraph?: string;
  diffFlameGraph?: string;
  notes: string[];
}

/**
 * Writes the report JSON, the markdown, folded stacks of each side and flame graphs (head, and
 * base → head differential) into `dir`.
 */
export function writeArtifacts(dir: string, report: Report, measurements: Measurements): WrittenFiles {
  const out = resolve(dir);
  mkdirSync(out, { recursive: true });
  const files: WrittenFiles = {
    dir: out,
    report: join(out, 'report.json'),
    markdown: join(out, 'report.md'),
    folded: {},
    notes: [],
  };
  writeFileSync(files.report, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(files.markdown, renderMarkdown(report));
  const profiles = sideProfiles(measurements);
  // Extra files never sink a run: a renderer that fails leaves a note in `files.notes`.
  const attempt = (what: string, write: () => void) => {
    try {
      write();
    } catch (err) {
      files.notes.push(`${what} could not be written: ${(err as Error).message}`);
    }
  };
  for (const side of ['base', 'head'] as const) {
    const profile = profiles[side];
    if (!profile) continue;
    const path = join(out, `${side}.folded`);
    attempt(`${side}.folded`, () => {
      writeFileSync(path, toFolded(profile));
      files.folded[side] = path;
    });
  }
  if (profiles.head) {
    const head = profiles.head;
    const path = join(out, 'head-flamegraph.svg');
    attempt('the head flame graph', () => {
      writeFileSync(path, renderFlameGraph(head, { format: 'svg', title: 'hotpath: head' }));
      files.flameGraph = path;
    });
  }
  if (profiles.base && profiles.head) {
    const { base, head } = profiles;
    const path = join(out, 'diff-flamegraph.svg');
    attempt('the differential flame graph', () => {
      writeFileSync(path, renderDiffFlameGraph(base, head, { format: 'svg', title: 'hotpath: base → head' }));
      files.diffFlameGraph = path;
    });
  }
  return files;
}
