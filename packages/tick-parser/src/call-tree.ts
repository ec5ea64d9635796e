import type { Profile } from './model.js';

/** A node of a call tree; `fn` indexes `profile.functions` (-1 for the root). */
export interface CallTreeNode {
  fn: number;
  /** Samples whose stack passes through this node. */
  total: number;
  /** Samples whose stack ends at this node. */
  self: number;
  children: Map<number, CallTreeNode>;
}

function child(parent: CallTreeNode, fn: number): CallTreeNode {
  let node = parent.children.get(fn);
  if (!node) {
    node = { fn, total: 0, self: 0, children: new Map() };
    parent.children.set(fn, node);
  }
  return node;
}

/** Callers above callees: root → main → handler → hash. */
export function buildTopDownTree(profile: Profile): CallTreeNode {
  const root: CallTreeNode = { fn: -1, total: 0, self: 0, children: new Map() };
  for (const { frames, count } of profile.stacks) {
    root.total += count;
    let node = root;
    for (const fn of frames) {
      node = child(node, fn);
      node.total += count;
    }
    node.self += count;
  }
  return root;
}

/** Sampled functions first, then their callers (V8's "bottom up (heavy) profile"). */
export function buildBottomUpTree(profile: Profile): CallTreeNode {
  const root: CallTreeNode = { fn: -1, total: 0, self: 0, children: new Map() };
  for (const { frames, count } of profile.stacks) {
    root.total += count;
    let node = root;
    for (let i = frames.length - 1; i >= 0; i--) {
      const fn = frames[i];
      if (fn === undefined) continue; // a hole in a hand-made stack (arrays the parsers build have none)
      node = child(node, fn);
      node.total += count;
    }
    node.self += count;
  }
  return root;
}

/** Children sorted by total, largest first (ties by function index for a stable order). */
export function sortedChildren(node: CallTreeNode): CallTreeNode[] {
  return [...node.children.values()].sort((a, b) => b.total - a.total || a.fn - b.fn);
}
