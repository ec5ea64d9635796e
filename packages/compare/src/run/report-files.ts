// The run layer's one writer of report files: render makes the texts, this puts them on disk.
import { join } from 'node:path';
import { renderDiffFlameGraph, renderFlameGraph, toFolded } from '@hotpath/tick-parser';
import type { Report } from '../model.js';
import { makeOutputFolder, writeOutputFile } from '../output-file.js';
import type { ProfileReport, ScenarioFiles, WrittenFiles } from '../run-artifacts.js';

export type { ScenarioFiles, WrittenFiles };

import { renderMarkdown } from '../render/markdown.js';
import { profileJson } from '../render/profile-report.js';
import { renderHtmlReport, renderJson } from '../render/render.js';
import { viewerAssets } from './viewer-assets.js';

/** A scenario name as a file-name prefix: letters, digits, `-` and `_` only. */
export function fileSlug(name: string, index: number): string {
  const dashed = name
    .slice(0, 200)
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-');
  // Trimmed by hand: `/-+$/` tries every dash of a long run as a start (quadratic).
  let start = 0;
  let end = dashed.length;
  while (start < end && dashed[start] === '-') start++;
  while (end > start && dashed[end - 1] === '-') end--;
  const slug = dashed.slice(start, end).slice(0, 40);
  return `${index + 1}-${slug || 'scenario'}`;
}

/**
 * Every file is written by writeOutputFile: a link planted where a file goes is replaced, its
 * target left unchanged.
 *
 * Writes the report JSON, the markdown, report.html, and per scenario folded stacks of each side
 * and flame graphs (head, and base → head differential) into `dir`. With one scenario the profile files
 * have no prefix (`base.folded`); with several, each starts with the scenario's number and name.
 */
export function writeReport(dir: string, report: Report): WrittenFiles {
  const out = makeOutputFolder(dir);
  const files: WrittenFiles = {
    dir: out,
    report: join(out, 'report.json'),
    markdown: join(out, 'report.md'),
    scenarios: [],
    notes: [],
  };
  writeOutputFile(files.report, renderJson(report));
  writeOutputFile(files.markdown, renderMarkdown(report, { maxLength: Number.POSITIVE_INFINITY }));
  // Extra files never sink a run: a renderer that fails leaves a note in `files.notes`.
  const attempt = (what: string, write: () => void) => {
    try {
      write();
    } catch (err) {
      files.notes.push(`${what} could not be written: ${(err as Error).message}`);
    }
  };
  const html = join(out, 'report.html');
  attempt('report.html', () => {
    writeOutputFile(html, renderHtmlReport(report, viewerAssets()));
    files.html = html;
  });
  const many = report.scenarios.length > 1;
  report.scenarios.forEach(({ name: scenario, profiles }, index) => {
    const prefix = many ? `${fileSlug(scenario, index)}.` : '';
    const written: ScenarioFiles = { scenario, folded: {} };
    files.scenarios.push(written);
    for (const side of ['base', 'head'] as const) {
      const profile = profiles[side];
      if (!profile) continue;
      const path = join(out, `${prefix}${side}.folded`);
      attempt(`${prefix}${side}.folded`, () => {
        writeOutputFile(path, toFolded(profile));
        written.folded[side] = path;
      });
    }
    if (profiles.head) {
      const head = profiles.head;
      const path = join(out, `${prefix}head-flamegraph.svg`);
      attempt(`the head flame graph of ${scenario}`, () => {
        writeOutputFile(
          path,
          renderFlameGraph(head, { format: 'svg', title: `hotpath: head · ${scenario}` }),
        );
        written.flameGraph = path;
      });
    }
    if (profiles.base && profiles.head) {
      const { base, head } = profiles;
      const path = join(out, `${prefix}diff-flamegraph.svg`);
      attempt(`the differential flame graph of ${scenario}`, () => {
        writeOutputFile(
          path,
          renderDiffFlameGraph(base, head, { format: 'svg', title: `hotpath: base → head · ${scenario}` }),
        );
        written.diffFlameGraph = path;
      });
    }
  });
  return files;
}

/** Writes profile.json, head.folded and head-flamegraph.svg into `dir`; returns the folder. */
export function writeProfileReport(dir: string, report: ProfileReport): string {
  const out = makeOutputFolder(dir);
  const { profile } = report;
  writeOutputFile(join(out, 'profile.json'), `${JSON.stringify(profileJson(report), null, 2)}\n`);
  if (profile) {
    writeOutputFile(join(out, 'head.folded'), toFolded(profile));
    writeOutputFile(
      join(out, 'head-flamegraph.svg'),
      renderFlameGraph(profile, { format: 'svg', title: 'hotpath profile' }),
    );
  }
  return out;
}
