import { readSource, resolveImport } from '../source/files.js';
import { type ChildRef, type RouteFacts, readRouteFacts } from './route-facts.js';

// The GET routes of a project as its framework serves them: every file's route facts
// (route-facts.ts) joined along the mounts — `app.use('/api', api)` in one file, `api.use('/tags',
// tags)` in a second, `tags.get('/', …)` in a third is `/api/tags` — following relative imports
// and requires between the files. Objects nothing mounts are the roots (the app, the server).

export interface FoundRoute {
  /** The full path, prefixes joined. */
  path: string;
  /** The project file that registers it. */
  file: string;
  /** The authentication middleware before its handler, as written, when there is one. */
  auth?: string;
}

/** At most this many bytes of source are read in all. */
const MAX_TOTAL_BYTES = 24 * 1024 * 1024;
const MAX_ROUTES = 500;

/** Joins a prefix and a path as routers do: `/api` + `/` is `/api`, `` + `/` is `/`. */
export function joinPath(prefix: string, path: string): string {
  const head = trimSlashes(prefix);
  const tail = trimSlashes(path);
  const joined = `${head === '' ? '' : `/${head}`}${tail === '' ? '' : `/${tail}`}`;
  return joined === '' ? '/' : joined;
}

/** `text` without its leading and trailing slashes (a loop: no regex backtracking on `////…`). */
function trimSlashes(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) === 47) start++;
  while (end > start && text.charCodeAt(end - 1) === 47) end--;
  return text.slice(start, end);
}

interface Edge {
  prefix: string;
  child: string;
}

const key = (file: string, name: string) => `${file}#${name}`;
const FILE_NODE = '*';

/** Each readable file's route facts, within the byte budget. */
function readFacts(dir: string, files: readonly string[]): Map<string, RouteFacts> {
  const facts = new Map<string, RouteFacts>();
  let bytes = 0;
  for (const file of files) {
    const text = readSource(dir, file);
    if (text === undefined || (bytes += text.length) > MAX_TOTAL_BYTES) continue;
    facts.set(file, readRouteFacts(text));
  }
  return facts;
}

/** Names across files: a local name, or an imported one followed to the file that defines it. */
function resolverOf(facts: Map<string, RouteFacts>) {
  const known = new Set(facts.keys());
  const resolveModule = (
    from: string,
    specifier: string,
    member: string,
    depth: number,
  ): string | undefined => {
    const target = resolveImport(known, from, specifier);
    const tf = target === undefined ? undefined : facts.get(target);
    if (target === undefined || tf === undefined) return undefined;
    const name = member === '*' ? undefined : tf.exports.get(member);
    if (name === undefined) return key(target, FILE_NODE);
    const imported = tf.imports.get(name);
    if (imported !== undefined && depth < 12)
      return resolveModule(target, imported.specifier, imported.member, depth + 1);
    return key(target, name);
  };
  const resolveLocal = (file: string, name: string): string | undefined => {
    const imported = facts.get(file)?.imports.get(name);
    return imported === undefined
      ? key(file, name)
      : resolveModule(file, imported.specifier, imported.member, 0);
  };
  const resolveChild = (file: string, child: ChildRef): string | undefined => {
    if (child.kind === 'local') return resolveLocal(file, child.name);
    if (child.specifier.startsWith('#local:')) {
      const imported = facts.get(file)?.imports.get(child.specifier.slice('#local:'.length));
      if (imported === undefined || (imported.member !== '*' && imported.member !== 'default'))
        return undefined;
      return resolveModule(file, imported.specifier, child.member, 0);
    }
    return resolveModule(file, child.specifier, child.member, 0);
  };
  return { resolveLocal, resolveChild };
}

/** The mount graph: each node's own routes, its mounted children with their prefixes, its prefix. */
function mountGraph(facts: Map<string, RouteFacts>) {
  const { resolveLocal, resolveChild } = resolverOf(facts);
  const registrations = new Map<string, FoundRoute[]>();
  const edges = new Map<string, Edge[]>();
  const prefixes = new Map<string, string>();
  const mountedInFile = new Set<string>();
  for (const [file, f] of facts) {
    for (const [name, prefix] of f.prefixes) prefixes.set(key(file, name), prefix);
    for (const r of f.registrations) {
      const node = resolveLocal(file, r.object) ?? key(file, r.object);
      const list = registrations.get(node) ?? [];
      list.push({ path: r.path, file, ...(r.auth ? { auth: r.auth } : {}) });
      registrations.set(node, list);
    }
    for (const m of f.mounts) {
      const parent = resolveLocal(file, m.parent) ?? key(file, m.parent);
      const child = resolveChild(file, m.child);
      if (child === undefined || child === parent) continue;
      const list = edges.get(parent) ?? [];
      list.push({ prefix: m.prefix, child });
      edges.set(parent, list);
      if (child.startsWith(`${file}#`)) mountedInFile.add(child);
    }
  }
  // A file's node (a module mounted whole: a plugin function, an unnamed export) is its objects
  // that the file itself does not mount.
  const nodesOf = new Map<string, string[]>();
  for (const node of new Set([...registrations.keys(), ...edges.keys()])) {
    const file = node.slice(0, node.lastIndexOf('#'));
    if (mountedInFile.has(node)) continue;
    nodesOf.set(file, [...(nodesOf.get(file) ?? []), node]);
  }
  const expand = (node: string): string[] =>
    node.endsWith(`#${FILE_NODE}`) ? (nodesOf.get(node.slice(0, -FILE_NODE.length - 1)) ?? []) : [node];
  return { registrations, edges, prefixes, expand };
}

/** Reads `files` (project-relative) and returns their GET routes with full paths, in mount order. */
export function discoverRoutes(dir: string, files: readonly string[]): FoundRoute[] {
  const facts = readFacts(dir, files);
  const { registrations, edges, prefixes, expand } = mountGraph(facts);
  const children = new Set<string>();
  for (const list of edges.values()) for (const e of list) for (const n of expand(e.child)) children.add(n);

  const found = new Map<string, FoundRoute>();
  const visit = (node: string, prefix: string, stack: Set<string>) => {
    if (stack.has(node) || stack.size > 24 || found.size >= MAX_ROUTES) return;
    stack.add(node);
    const here = joinPath(prefix, prefixes.get(node) ?? '');
    for (const r of registrations.get(node) ?? []) {
      const path = joinPath(here, r.path);
      if (!found.has(path)) found.set(path, { ...r, path });
    }
    for (const e of edges.get(node) ?? [])
      for (const child of expand(e.child)) visit(child, joinPath(here, e.prefix), stack);
    stack.delete(node);
  };
  for (const node of [...registrations.keys(), ...edges.keys()])
    if (!children.has(node)) visit(node, '', new Set());

  const globalPrefix = [...facts.values()].find((f) => f.globalPrefix !== undefined)?.globalPrefix ?? '';
  for (const [file, f] of facts)
    for (const r of f.nest) {
      const path = joinPath(globalPrefix, r.path);
      if (!found.has(path) && found.size < MAX_ROUTES)
        found.set(path, { path, file, ...(r.auth ? { auth: r.auth } : {}) });
    }
  return [...found.values()];
}
