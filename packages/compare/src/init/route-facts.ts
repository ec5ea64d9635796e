import { callArguments, closing, id, objectKey, punct, str } from '../source/token-query.js';
import { type Token, tokenize } from '../source/tokens.js';
import { type Bindings, readCommonJsExport, readExport, readImport, readRequire } from './bindings.js';

// What one source file says about routes, read from its tokens: which objects register GET
// routes (Express, Koa/@koa/router, Fastify, Restify, hapi), which objects are mounted on which
// under what prefix (`use(path, router)`, `register(plugin, { prefix })`, `applyRoutes(server,
// path)`, `router.routes()`) and Nest's decorators; what the file imports and exports is read
// by bindings.ts. The files are joined into full paths by routes.ts.

/** Where a mounted thing comes from: an object of this file, an import's name, or a module. */
export type ChildRef =
  | { kind: 'local'; name: string }
  | { kind: 'module'; specifier: string; member: string };

export interface Registration {
  /** The token index of the call (source order). */
  at: number;
  object: string;
  path: string;
  /** Middleware named like an authentication check sits before the handler. */
  auth?: string;
}

export interface Mount {
  /** The token index of the call: mounts are kept in source order. */
  at: number;
  parent: string;
  prefix: string;
  child: ChildRef;
}

export interface RouteFacts extends Bindings {
  registrations: Registration[];
  mounts: Mount[];
  /** Nest: GET routes of controllers, prefix and path joined; and `setGlobalPrefix`. */
  nest: Registration[];
  globalPrefix?: string;
}

const GET_METHODS = new Set(['get', 'all']);
const AUTH_NAME = /auth|jwt|passport|protect|login|guard|token|session|ensure|verify|require(?:d|s)?user/i;

/** At most this many `x.method(` calls of one file are read (each reads at most token-query.ts SCAN tokens). */
const MAX_CALLS = 4000;

/** A mounted argument: `router`, `router.routes()`, `api.router`, `require('./x')`, `import('./x')`. */
function childOf(tokens: Token[], [start, end]: [number, number]): ChildRef | undefined {
  const first = tokens[start];
  if ((id(first, 'require') || id(first, 'import')) && punct(tokens[start + 1], '(')) {
    const specifier = str(tokens[start + 2]);
    if (specifier === undefined) return undefined;
    const member =
      punct(tokens[start + 4], '.') && id(tokens[start + 5])
        ? (tokens[start + 5] as { text: string }).text
        : 'default';
    return { kind: 'module', specifier, member };
  }
  if (punct(first, '(') && id(tokens[start + 1], 'await')) return childOf(tokens, [start + 2, end - 1]);
  if (id(first, 'await')) return childOf(tokens, [start + 1, end]);
  const param = inlineFunctionParameter(tokens, start);
  if (param !== undefined) return { kind: 'local', name: param };
  if (first?.kind !== 'id') return undefined;
  // `router`, `router.routes()`, `router.middleware()`, `api.router`: the first name is the object.
  const rest = tokens.slice(start + 1, Math.min(end, start + 4));
  if (rest.length === 0) return { kind: 'local', name: first.text };
  if (punct(rest[0], '.') && id(rest[1])) {
    const member = (rest[1] as { text: string }).text;
    if (member === 'routes' || member === 'middleware' || member === 'allowedMethods')
      return { kind: 'local', name: first.text };
    if (end - start === 3) return { kind: 'module', specifier: `#local:${first.text}`, member };
  }
  return undefined;
}

/** An inline plugin, `async function (app) {…}`, `(app) => {…}`, `app => …`: its first parameter. */
function inlineFunctionParameter(tokens: Token[], start: number): string | undefined {
  let i = start;
  if (id(tokens[i], 'async')) i++;
  if (id(tokens[i], 'function')) {
    i++;
    if (id(tokens[i])) i++;
    return punct(tokens[i], '(') && id(tokens[i + 1]) ? (tokens[i + 1] as { text: string }).text : undefined;
  }
  if (punct(tokens[i], '(') && id(tokens[i + 1])) {
    const close = closing(tokens, i);
    return punct(tokens[close + 1], '=>') ? (tokens[i + 1] as { text: string }).text : undefined;
  }
  if (id(tokens[i]) && punct(tokens[i + 1], '=>')) return (tokens[i] as { text: string }).text;
  return undefined;
}

/** Middleware names before the handler in a registration's arguments, when one reads like auth. */
function authMiddleware(tokens: Token[], args: [number, number][]): string | undefined {
  for (const [start, end] of args.slice(1, -1)) {
    // `auth.optional`, `optionalAuth`: a login is read when given, not required.
    if (
      tokens.slice(start, Math.min(end, start + 12)).some((t) => t.kind === 'id' && /optional/i.test(t.text))
    )
      continue;
    for (let i = start; i < Math.min(end, start + 12); i++) {
      const t = tokens[i];
      if (t?.kind === 'id' && AUTH_NAME.test(t.text))
        return tokens
          .slice(start, Math.min(end, start + 6))
          .map((x) => (x.kind === 'tpl' ? '`…`' : x.kind === 'str' ? `'${x.text}'` : x.text))
          .join('');
    }
  }
  return undefined;
}

/** Nest: `@Controller('x')` and `@Get('y')`, `@UseGuards(…)` near a `@Get`. */
function readNest(tokens: Token[], i: number, facts: RouteFacts, controller: { prefix: string }): void {
  const name = tokens[i + 1];
  if (!id(name) || !punct(tokens[i + 2], '(')) return;
  const text = (name as { text: string }).text;
  const arg = tokens[i + 3];
  const value = str(arg) ?? objectKey(tokens, i + 3, ['path']) ?? (punct(arg, ')') ? '' : undefined);
  if (text === 'Controller' && value !== undefined) controller.prefix = value;
  if (text === 'Get' && value !== undefined) {
    const window = tokens.slice(Math.max(0, i - 12), i + 16);
    const guarded = window.some((t) => id(t, 'UseGuards') || id(t, 'Auth'));
    facts.nest.push({
      at: i,
      object: '#nest',
      path: `/${[controller.prefix, value].filter(Boolean).join('/')}`,
      ...(guarded ? { auth: '@UseGuards' } : {}),
    });
  }
}

/** Reads one source file's route facts. */
export function readRouteFacts(text: string): RouteFacts {
  const tokens = tokenize(text);
  const facts: RouteFacts = {
    registrations: [],
    mounts: [],
    prefixes: new Map(),
    imports: new Map(),
    exports: new Map(),
    nest: [],
  };
  const controller = { prefix: '' };
  const owners = new Map<number, string | undefined>();
  let calls = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t?.kind === 'punct') {
      if (t.text === '@') readNest(tokens, i, facts, controller);
      continue;
    }
    if (t?.kind !== 'id') continue;
    if (t.text === 'import' && !punct(tokens[i + 1], '(') && !punct(tokens[i - 1], '.'))
      readImport(tokens, i, facts);
    else if ((t.text === 'const' || t.text === 'let' || t.text === 'var') && !punct(tokens[i - 1], '.'))
      readRequire(tokens, i, facts);
    else if (t.text === 'export' && !punct(tokens[i - 1], '.')) readExport(tokens, i, facts);
    else if ((t.text === 'module' || t.text === 'exports') && !punct(tokens[i - 1], '.'))
      readCommonJsExport(tokens, i, facts);
    if (!punct(tokens[i + 1], '.') || !id(tokens[i + 2]) || !punct(tokens[i + 3], '(')) continue;
    // `x.method(` — or `).method(` continuing a chain whose receiver was x.
    const method = (tokens[i + 2] as { text: string }).text;
    if (++calls > MAX_CALLS) break;
    readCall(tokens, i + 3, t.text, method, facts);
    if (method === 'setGlobalPrefix') facts.globalPrefix = str(tokens[i + 4]) ?? facts.globalPrefix;
  }
  // `).get('/x', …)` in a chain: the tokens before `.get` end with `)`.
  for (let i = 2; i < tokens.length; i++) {
    if (
      !punct(tokens[i - 2], ')') ||
      !punct(tokens[i - 1], '.') ||
      !id(tokens[i]) ||
      !punct(tokens[i + 1], '(')
    )
      continue;
    if (++calls > 2 * MAX_CALLS) break;
    const owner = chainOwner(tokens, i - 2, owners);
    if (owner === undefined) continue;
    if (owner === '#default') facts.exports.set('default', owner);
    readCall(tokens, i + 1, owner, (tokens[i] as { text: string }).text, facts, true);
  }
  facts.mounts.sort((a, b) => a.at - b.at);
  facts.registrations.sort((a, b) => a.at - b.at);
  return facts;
}

/**
 * The receiver at the start of the chain ending at `close` (a `)`): `router` in
 * `router.get(…).get(…)`. `known` holds the owners found for earlier links of the file, read in
 * order, so a long chain costs one step per link, not one per link before it.
 */
function chainOwner(
  tokens: Token[],
  close: number,
  known: Map<number, string | undefined>,
): string | undefined {
  const owner = chainRoot(tokens, close, known);
  known.set(close, owner);
  return owner;
}

function chainRoot(
  tokens: Token[],
  close: number,
  known: Map<number, string | undefined>,
): string | undefined {
  let i = close;
  for (let steps = 0; steps < 64 && i >= 0; steps++) {
    if (i !== close && known.has(i)) return known.get(i);
    const end = tokens[i];
    if (end?.kind !== 'punct' || end.text !== ')' || end.pair === undefined) return undefined;
    // Back to the matching `(`.
    i = end.pair;
    // `name(` preceded by `.`: step over `.name`; the chain's root is an identifier before it.
    if (!id(tokens[i - 1])) return undefined;
    if (!punct(tokens[i - 2], '.')) {
      // `const api = Router().use(…)`, `new Router().get(…)`, `export default Router().use(…)`
      let k = i - 2;
      for (let n = 0; n < 8 && id(tokens[k]) && punct(tokens[k - 1], '.'); n++) k -= 2;
      if (id(tokens[k], 'new')) k--;
      if (punct(tokens[k], '=') && id(tokens[k - 1])) return (tokens[k - 1] as { text: string }).text;
      if (id(tokens[k], 'default') && id(tokens[k - 1], 'export')) return '#default';
      return undefined;
    }
    const before = tokens[i - 3];
    if (id(before) && !punct(tokens[i - 4], '.')) return (before as { text: string }).text;
    i -= 3;
  }
  return undefined;
}

/** One `object.method(…)` call whose `(` is at `open`. */
function readCall(
  tokens: Token[],
  open: number,
  object: string,
  method: string,
  facts: RouteFacts,
  chained = false,
): void {
  if (method === 'route' && !chained) {
    // Express `router.route('/x').get(…)`; Fastify/hapi `server.route({ method: 'GET', url: '/x' })`.
    const path = str(tokens[open + 1]);
    if (path !== undefined) {
      const end = closing(tokens, open);
      for (let k = end + 1; k < tokens.length && k < end + 400; k++) {
        if (punct(tokens[k], ';') || (id(tokens[k]) && !punct(tokens[k - 1], '.'))) break;
        if (punct(tokens[k], '.') && id(tokens[k + 1], 'get') && punct(tokens[k + 2], '(')) {
          facts.registrations.push({ at: open, object, path });
          break;
        }
        if (punct(tokens[k], '(')) k = closing(tokens, k);
      }
      return;
    }
    const verb = objectKey(tokens, open + 1, ['method']);
    const url = objectKey(tokens, open + 1, ['url', 'path']);
    if (url !== undefined && verb !== undefined && /^(?:GET|\*)$/i.test(verb))
      facts.registrations.push({ at: open, object, path: url });
    return;
  }
  if (GET_METHODS.has(method)) {
    const path = str(tokens[open + 1]) ?? objectKey(tokens, open + 1, ['path', 'url']);
    if (path === undefined || (!path.startsWith('/') && path !== '' && path !== '*')) return;
    const args = callArguments(tokens, open);
    const auth = authMiddleware(tokens, args);
    facts.registrations.push({ at: open, object, path: path === '' ? '/' : path, ...(auth ? { auth } : {}) });
    return;
  }
  if (method === 'use' || method === 'register') {
    const args = callArguments(tokens, open);
    const first = args[0];
    if (first === undefined) return;
    const pathArg = first[1] - first[0] === 1 ? str(tokens[first[0]]) : undefined;
    const options = method === 'register' ? args[1] : undefined;
    const prefix = pathArg ?? (options ? objectKey(tokens, options[0], ['prefix']) : undefined) ?? '';
    for (const arg of pathArg !== undefined
      ? args.slice(1)
      : method === 'register'
        ? args.slice(0, 1)
        : args) {
      const child = childOf(tokens, arg);
      if (child) facts.mounts.push({ at: open, parent: object, prefix, child });
    }
    return;
  }
  if (chained) return;
  if (method === 'applyRoutes') {
    // restify-router: router.applyRoutes(server, '/prefix')
    const args = callArguments(tokens, open);
    const server = args[0] && args[0][1] - args[0][0] === 1 ? tokens[args[0][0]] : undefined;
    const prefix = args[1] && args[1][1] - args[1][0] === 1 ? str(tokens[args[1][0]]) : undefined;
    if (id(server))
      facts.mounts.push({
        at: open,
        parent: (server as { text: string }).text,
        prefix: prefix ?? '',
        child: { kind: 'local', name: object },
      });
    return;
  }
  if (method === 'prefix') {
    const prefix = str(tokens[open + 1]);
    if (prefix !== undefined) facts.prefixes.set(object, prefix);
  }
}
