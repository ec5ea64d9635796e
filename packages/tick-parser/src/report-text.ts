import { buildBottomUpTree, buildTopDownTree, type CallTreeNode, sortedChildren } from './call-tree.js';
import { functionLabel, UNKNOWN_FRAME } from './function-label.js';
import type { FunctionEntry, Profile } from './model.js';
import { summarize } from './summary.js';

export interface TextReportOptions {
  /** Name of the input in the first line (default: "the profile"). */
  fileName?: string;
  /** At most this many entries per flat section (default: all). */
  top?: number;
  /** Callers/callees below this share of their parent are left out (default 1.0 %, as --prof-process). */
  cutoffPercent?: number;
  /** Depth of the bottom-up and top-down trees (default 5, as --prof-process). */
  depth?: number;
  /** Include the top-down tree (default true). */
  topDown?: boolean;
}

function pct(part: number, whole: number): string {
  return `${(whole > 0 ? (part * 100) / whole : 0).toFixed(1).padStart(5)}%`;
}

function line(ticks: number, total: number, nonLib: number | null, name: string): string {
  const nonLibText = nonLib === null ? '        ' : `${pct(ticks, nonLib)}  `;
  return `  ${String(ticks).padStart(5)}  ${pct(ticks, total)}  ${nonLibText}${name}`;
}

function flatSection(
  out: string[],
  title: string,
  functions: FunctionEntry[],
  keep: (fn: FunctionEntry) => boolean,
  total: number,
  nonLib: number | null,
  top: number,
): void {
  out.push('', ` [${title}]:`, '   ticks  total  nonlib   name');
  let shown = 0;
  for (const fn of functions) {
    if (fn.self === 0 || !keep(fn)) continue;
    if (shown++ >= top) break;
    out.push(line(fn.self, total, nonLib, functionLabel(fn)));
  }
}

function treeSection(
  out: string[],
  root: CallTreeNode,
  labels: string[],
  total: number,
  cutoff: number,
  depth: number,
): void {
  const visit = (node: CallTreeNode, parentTotal: number, indent: number) => {
    const share = parentTotal > 0 ? (node.total * 100) / parentTotal : 0;
    if (share < cutoff) return;
    out.push(
      `  ${String(node.total).padStart(5)}  ${share.toFixed(1).padStart(5)}%  ${' '.repeat(indent)}${labels[node.fn] ?? UNKNOWN_FRAME.name}`,
    );
    if (indent < 2 * depth) for (const c of sortedChildren(node)) visit(c, node.total, indent + 2);
    if (indent === 0) out.push('');
  };
  for (const c of sortedChildren(root)) visit(c, total, 0);
}

/**
 * The `node --prof-process` text layout: shared libraries, JavaScript and C++ flat profiles, the
 * summary, the bottom-up (heavy) profile with each caller's share of its parent, and a top-down tree.
 */
export function renderTextReport(profile: Profile, options: TextReportOptions = {}): string {
  const top = options.top ?? Number.POSITIVE_INFINITY;
  const cutoff = options.cutoffPercent ?? 1;
  const depth = options.depth ?? 5;
  const s = summarize(profile);
  const total = s.total;
  const nonLib = total - s.shared;
  const out: string[] = [
    `Statistical profiling result from ${options.fileName ?? 'the profile'}, (${total} ticks, ${s.unaccounted} unaccounted, 0 excluded).`,
  ];
  const fns = profile.functions;
  flatSection(out, 'Shared libraries', fns, (f) => f.kind === 'shared', total, null, top);
  flatSection(
    out,
    'JavaScript',
    fns,
    (f) => f.kind === 'js' || f.kind === 'builtin' || f.kind === 'regexp',
    total,
    nonLib,
    top,
  );
  flatSection(out, 'C++', fns, (f) => f.kind === 'cpp', total, nonLib, top);
  if (s.other > 0) flatSection(out, 'Other', fns, (f) => f.kind === 'meta', total, nonLib, top);

  out.push('', ' [Summary]:', '   ticks  total  nonlib   name');
  out.push(line(s.js, total, nonLib, 'JavaScript'));
  out.push(line(s.cpp, total, nonLib, 'C++'));
  out.push(line(s.gc, total, nonLib, 'GC'));
  out.push(line(s.shared, total, null, 'Shared libraries'));
  if (s.other > 0) out.push(line(s.other, total, nonLib, 'Other'));
  if (s.unaccounted > 0) out.push(line(s.unaccounted, total, null, 'Unaccounted'));

  if (profile.warnings.length > 0) {
    out.push('', ' [Warnings]:');
    for (const w of profile.warnings) out.push(`   ${w}`);
  }

  const labels = fns.map(functionLabel);
  out.push(
    '',
    ' [Bottom up (heavy) profile]:',
    '  Note: percentage shows a share of a particular caller in the total',
    '  amount of its parent calls.',
    `  Callers occupying less than ${cutoff.toFixed(1)}% are not shown.`,
    '',
    '   ticks parent  name',
  );
  treeSection(out, buildBottomUpTree(profile), labels, total, cutoff, depth);
  if (options.topDown ?? true) {
    out.push(
      '',
      ' [Top down (heavy) profile]:',
      "  Note: callers above callees; percentage shows a callee's share of its caller.",
      `  Callees occupying less than ${cutoff.toFixed(1)}% are not shown.`,
      '',
      '   ticks parent  name',
    );
    treeSection(out, buildTopDownTree(profile), labels, total, cutoff, depth);
  }
  return `${out.join('\n')}\n`;
}
