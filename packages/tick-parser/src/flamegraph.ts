import { buildTopDownTree, type CallTreeNode, sortedChildren } from './call-tree.js';
import { crossProfileKey, functionLabel, UNKNOWN_FRAME } from './function-label.js';
import type { FunctionKind, Profile } from './model.js';

export interface FlameGraphOptions {
  /** 'svg' (default) or a self-contained 'html' page with search and click-to-zoom. */
  format?: 'svg' | 'html';
  title?: string;
  /** Image width in pixels (default 1200). */
  width?: number;
  /** Frames narrower than this many pixels are left out (default 0.3). */
  minFrameWidth?: number;
}

interface Frame {
  x: number;
  w: number;
  depth: number;
  label: string;
  kind: FunctionKind;
  total: number;
  self: number;
  /** Differential graphs: head self share - base self share of this stack node. */
  delta?: number;
  note?: string;
}

const FRAME_HEIGHT = 16;
const TOP = 36;
const BOTTOM = 8;
const CHAR_WIDTH = 6.6;

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return (h >>> 0) / 4294967296;
}

const PALETTE: Record<FunctionKind, [number, number, number]> = {
  js: [45, 90, 58], // yellow-orange
  cpp: [8, 80, 62], // red
  builtin: [275, 45, 68], // violet
  regexp: [320, 60, 70], // pink
  shared: [30, 10, 62], // grey-brown
  gc: [120, 45, 55], // green
  meta: [210, 10, 75], // grey
  unknown: [0, 0, 70], // grey
};

function kindColor(kind: FunctionKind, label: string): string {
  const [h, s, l] = PALETTE[kind];
  const jitter = hash(label);
  return `hsl(${(h + jitter * 16 - 8).toFixed(0)},${s}%,${(l + jitter * 10 - 5).toFixed(0)}%)`;
}

function diffColor(delta: number, maxAbs: number): string {
  if (maxAbs <= 0 || Math.abs(delta) < 1e-9) return 'hsl(0,0%,92%)';
  const strength = Math.min(1, Math.abs(delta) / maxAbs);
  const lightness = (92 - 42 * strength).toFixed(0);
  return delta > 0 ? `hsl(0,85%,${lightness}%)` : `hsl(220,85%,${lightness}%)`;
}

function layout(
  root: CallTreeNode,
  width: number,
  minWidth: number,
  visit: (node: CallTreeNode, frame: Frame) => void,
): number {
  let maxDepth = 0;
  const scale = root.total > 0 ? width / root.total : 0;
  const walk = (node: CallTreeNode, x: number, depth: number) => {
    for (const c of sortedChildren(node)) {
      const w = c.total * scale;
      if (w >= minWidth) {
        const frame: Frame = { x, w, depth, label: '', kind: 'meta', total: c.total, self: c.self };
        visit(c, frame);
        if (depth > maxDepth) maxDepth = depth;
        walk(c, x, depth + 1);
      }
      x += w;
    }
  };
  walk(root, 0, 0);
  return maxDepth;
}

function renderSvg(
  frames: Frame[],
  maxDepth: number,
  total: number,
  title: string,
  width: number,
  color: (f: Frame) => string,
  subtitle: string,
): string {
  const height = TOP + (maxDepth + 1) * FRAME_HEIGHT + BOTTOM;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width + 20}" height="${height}" viewBox="0 0 ${width + 20} ${height}" font-family="monospace" font-size="11">`,
    `<rect x="0" y="0" width="${width + 20}" height="${height}" fill="#fdfdfd"/>`,
    `<text x="${(width + 20) / 2}" y="16" text-anchor="middle" font-size="14">${escapeXml(title)}</text>`,
    `<text x="10" y="30" fill="#555">${escapeXml(subtitle)}</text>`,
  ];
  for (const f of frames) {
    const y = height - BOTTOM - (f.depth + 1) * FRAME_HEIGHT;
    const share = total > 0 ? ((100 * f.total) / total).toFixed(2) : '0';
    const tip = `${f.label} (${f.total} samples, ${share}%, self ${f.self}${f.note ? `, ${f.note}` : ''})`;
    const chars = Math.floor((f.w - 6) / CHAR_WIDTH);
    const text = chars >= 3 ? (f.label.length <= chars ? f.label : `${f.label.slice(0, chars - 2)}..`) : '';
    out.push(
      `<g class="f" data-x="${(f.x + 10).toFixed(2)}" data-w="${f.w.toFixed(2)}" data-d="${f.depth}"><title>${escapeXml(tip)}</title>` +
        `<rect x="${(f.x + 10).toFixed(2)}" y="${y}" width="${Math.max(f.w - 0.5, 0.1).toFixed(2)}" height="${FRAME_HEIGHT - 1}" rx="2" fill="${color(f)}"/>` +
        (text ? `<text x="${(f.x + 13).toFixed(2)}" y="${y + 11.5}">${escapeXml(text)}</text>` : '') +
        '</g>',
    );
  }
  out.push('</svg>');
  return out.join('\n');
}

const PAGE_SCRIPT = `
const frames = [...document.querySelectorAll('g.f')];
const W = Number(document.querySelector('svg').getAttribute('width')) - 20;
function zoom(g) {
  const fx = Number(g.dataset.x), fw = Number(g.dataset.w), fd = Number(g.dataset.d);
  for (const f of frames) {
    const x = Number(f.dataset.x), w = Number(f.dataset.w), d = Number(f.dataset.d);
    const inside = x + w > fx + 0.01 && x < fx + fw - 0.01;
    const nx = 10 + (x - fx) * W / fw, nw = w * W / fw;
    f.style.display = inside && (d >= fd || (x <= fx && x + w >= fx + fw)) ? '' : 'none';
    const r = f.querySelector('rect'), t = f.querySelector('text');
    r.setAttribute('x', Math.max(nx, 10)); r.setAttribute('width', Math.max(Math.min(nw, W) - 0.5, 0.1));
    if (t) { t.setAttribute('x', Math.max(nx, 10) + 3); t.style.display = nw > 40 ? '' : 'none'; }
  }
}
for (const f of frames) f.addEventListener('click', () => zoom(f));
document.getElementById('reset').addEventListener('click', () => location.reload());
document.getElementById('search').addEventListener('input', (e) => {
  const q = e.target.value.toLowerCase();
  let hits = 0;
  for (const f of frames) {
    const match = q && f.querySelector('title').textContent.toLowerCase().includes(q);
    f.querySelector('rect').style.stroke = match ? '#e0f' : '';
    f.querySelector('rect').style.strokeWidth = match ? '2' : '';
    if (match) hits++;
  }
  document.getElementById('hits').textContent = q ? hits + ' frames match' : '';
});
`;

function wrapHtml(svg: string, title: string): string {
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeXml(title)}</title>`,
    '<style>body{font-family:sans-serif;margin:12px}g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:.5}</style>',
    '</head><body>',
    `<div><input id="search" placeholder="search functions" size="40"> <button id="reset">reset zoom</button> <span id="hits"></span></div>`,
    svg,
    `<script>${PAGE_SCRIPT}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}

/**
 * A flame graph of the profile's stacks (callers below callees, widths proportional to samples),
 * as a self-contained SVG or HTML page (no external resources).
 */
export function renderFlameGraph(profile: Profile, options: FlameGraphOptions = {}): string {
  const width = options.width ?? 1200;
  const title = options.title ?? 'Flame graph';
  const labels = profile.functions.map(functionLabel);
  const frames: Frame[] = [];
  const maxDepth = layout(buildTopDownTree(profile), width, options.minFrameWidth ?? 0.3, (node, frame) => {
    frame.label = labels[node.fn] ?? UNKNOWN_FRAME.name;
    frame.kind = (profile.functions[node.fn] ?? UNKNOWN_FRAME).kind;
    frames.push(frame);
  });
  const svg = renderSvg(
    frames,
    maxDepth,
    profile.totalTicks,
    title,
    width,
    (f) => kindColor(f.kind, f.label),
    `${profile.totalTicks} samples · ${profile.source}`,
  );
  return options.format === 'html' ? wrapHtml(svg, title) : svg;
}

/** Self samples of each stack node, keyed by the path of function keys (name + file). */
function selfByPath(profile: Profile): Map<string, number> {
  const keys = profile.functions.map(crossProfileKey);
  const map = new Map<string, number>();
  for (const { frames, count } of profile.stacks) {
    let path = '';
    for (const fn of frames) path += `${keys[fn]}\u0001`;
    map.set(path, (map.get(path) ?? 0) + count);
  }
  return map;
}

/**
 * A differential flame graph: the head profile's shape, each frame coloured by how its self share
 * changed against base (red: grew, blue: shrank, white: same). Functions are matched by name + file.
 */
export function renderDiffFlameGraph(base: Profile, head: Profile, options: FlameGraphOptions = {}): string {
  const width = options.width ?? 1200;
  const title = options.title ?? 'Differential flame graph (red: hotter in head, blue: cooler)';
  const baseSelf = selfByPath(base);
  const keys = head.functions.map(crossProfileKey);
  const labels = head.functions.map(functionLabel);
  const frames: Frame[] = [];
  const paths: string[] = [];
  const maxDepth = layout(buildTopDownTree(head), width, options.minFrameWidth ?? 0.3, (node, frame) => {
    const parentPath = frame.depth === 0 ? '' : paths[frame.depth - 1];
    const path = `${parentPath}${keys[node.fn]}\u0001`;
    paths[frame.depth] = path;
    const headShare = head.totalTicks > 0 ? node.self / head.totalTicks : 0;
    const before = baseSelf.get(path) ?? 0;
    const baseShare = base.totalTicks > 0 ? before / base.totalTicks : 0;
    frame.label = labels[node.fn] ?? UNKNOWN_FRAME.name;
    frame.kind = (head.functions[node.fn] ?? UNKNOWN_FRAME).kind;
    frame.delta = headShare - baseShare;
    frame.note = `self share ${(100 * baseShare).toFixed(2)}% → ${(100 * headShare).toFixed(2)}%`;
    frames.push(frame);
  });
  let maxAbs = 0;
  for (const f of frames) maxAbs = Math.max(maxAbs, Math.abs(f.delta ?? 0));
  const subtitle = `head ${head.totalTicks} samples, base ${base.totalTicks} samples; widths from head`;
  const svg = renderSvg(
    frames,
    maxDepth,
    head.totalTicks,
    title,
    width,
    (f) => diffColor(f.delta ?? 0, maxAbs),
    subtitle,
  );
  return options.format === 'html' ? wrapHtml(svg, title) : svg;
}
