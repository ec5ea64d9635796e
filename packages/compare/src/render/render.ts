import type { Report } from '../model.js';
import { renderHtml, type ViewerAssets } from './html.js';
import { type MarkdownOptions, renderMarkdown } from './markdown.js';
import { metricLabel } from './metric-labels.js';
import { renderTerminal } from './terminal.js';
import { runSummary, scenarioSummary } from './words.js';

/** The version of report.json's shape; bumped on every change a reader must know about. */
export const REPORT_SCHEMA = 'hotpath-report/6';

/**
 * The report as report.json holds it: the Report with its one-line summaries (the run's and
 * each scenario's), without the merged profiles (they are in the folded stacks and flame graphs).
 */
export function reportJson(report: Report) {
  return {
    schema: REPORT_SCHEMA,
    summary: runSummary(report),
    ...report,
    scenarios: report.scenarios.map(
      ({ profiles: _profiles, allocationProfiles: _allocations, waitingProfiles: _waiting, ...s }) => ({
        summary: scenarioSummary(s, report.settings.threshold),
        ...s,
        metrics: s.metrics.map((m) => ({ ...m, label: metricLabel(m.metric) })),
      }),
    ),
  };
}

/** report.json's text. */
export const renderJson = (report: Report): string => `${JSON.stringify(reportJson(report), null, 2)}\n`;

export interface RenderOptions {
  /** ANSI colours in the terminal text. */
  color?: boolean;
  /** The terminal's columns (120 when not given): its tables drop columns and its text wraps to fit. */
  width?: number;
  /** Every row of the terminal report, and the method's details. */
  verbose?: boolean;
  markdown?: MarkdownOptions;
}

/** Every text form of a report: the one-line summary, the terminal, markdown and JSON. Pure. */
export function render(report: Report, options: RenderOptions = {}) {
  return {
    summary: runSummary(report),
    terminal: renderTerminal(report, {
      color: options.color,
      width: options.width,
      verbose: options.verbose,
    }),
    markdown: renderMarkdown(report, options.markdown),
    json: renderJson(report),
  };
}

/**
 * report.html's text: the report as one self-contained page with per-round charts and
 * interactive base / head / differential flame graphs (the bundled viewer inlined).
 */
export const renderHtmlReport = (report: Report, assets: ViewerAssets): string => renderHtml(report, assets);
