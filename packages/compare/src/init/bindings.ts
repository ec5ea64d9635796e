import { closing, id, objectKey, punct, str } from '../source/token-query.js';
import type { Token } from '../source/tokens.js';

// What a file binds and exposes, for following mounts across files: its imports (ESM `import`,
// `require`, destructured requires, `await import()`), its exports (ESM, CommonJS, re-exports),
// and the routers it creates with a prefix of their own (`new Router({ prefix: '/api' })`).

export interface Bindings {
  /** Objects created with a prefix of their own (`new Router({ prefix })`, `router.prefix(…)`). */
  prefixes: Map<string, string>;
  /** Local name → the module and the name imported from it (`default`, `*` or a named export). */
  imports: Map<string, { specifier: string; member: string }>;
  /** Exported name (`default` included) → the local name it exports. */
  exports: Map<string, string>;
}

export function readImport(tokens: Token[], i: number, facts: Bindings): void {
  // import x from '…' | import * as x from '…' | import x, { a, b as c } from '…' | import { … } from '…'
  let j = i + 1;
  if (id(tokens[j], 'type')) return;
  const names: [string, string][] = [];
  if (id(tokens[j]) && !id(tokens[j], 'from')) {
    names.push([(tokens[j] as { text: string }).text, 'default']);
    j++;
    if (punct(tokens[j], ',')) j++;
  }
  if (punct(tokens[j], '*') && id(tokens[j + 1], 'as') && id(tokens[j + 2])) {
    names.push([(tokens[j + 2] as { text: string }).text, '*']);
    j += 3;
  } else if (punct(tokens[j], '{')) {
    const end = closing(tokens, j);
    for (let k = j + 1; k < end; k++) {
      if (!id(tokens[k])) continue;
      const name = (tokens[k] as { text: string }).text;
      if (id(tokens[k + 1], 'as') && id(tokens[k + 2])) {
        names.push([(tokens[k + 2] as { text: string }).text, name]);
        k += 2;
      } else names.push([name, name]);
    }
    j = end + 1;
  }
  const specifier = id(tokens[j], 'from') ? str(tokens[j + 1]) : undefined;
  if (specifier === undefined) return;
  for (const [local, member] of names) facts.imports.set(local, { specifier, member });
}

export function readRequire(tokens: Token[], i: number, facts: Bindings): void {
  // const x = require('…')[.member] | const { a, b: c } = require('…')
  const eq = punct(tokens[i + 2], '=') ? i + 2 : -1;
  if (punct(tokens[i + 1], '{')) {
    const end = closing(tokens, i + 1);
    if (!punct(tokens[end + 1], '=') || !id(tokens[end + 2], 'require')) return;
    const specifier = str(tokens[end + 4]);
    if (specifier === undefined) return;
    for (let k = i + 2; k < end; k++) {
      if (!id(tokens[k])) continue;
      const name = (tokens[k] as { text: string }).text;
      if (punct(tokens[k + 1], ':') && id(tokens[k + 2])) {
        facts.imports.set((tokens[k + 2] as { text: string }).text, { specifier, member: name });
        k += 2;
      } else facts.imports.set(name, { specifier, member: name });
    }
    return;
  }
  if (eq === -1 || !id(tokens[i + 1])) return;
  const local = (tokens[i + 1] as { text: string }).text;
  const call = id(tokens[eq + 1], 'await') ? eq + 2 : eq + 1;
  if ((id(tokens[call], 'require') || id(tokens[call], 'import')) && punct(tokens[call + 1], '(')) {
    const specifier = str(tokens[call + 2]);
    // `require('express')()` is a call of the module, not the module.
    if (specifier === undefined || !punct(tokens[call + 3], ')') || punct(tokens[call + 4], '(')) return;
    const member =
      punct(tokens[call + 4], '.') && id(tokens[call + 5])
        ? (tokens[call + 5] as { text: string }).text
        : 'default';
    facts.imports.set(local, { specifier, member });
    return;
  }
  // const router = new Router({ prefix: '/api' }) | express.Router({ … })
  let k = eq + 1;
  if (id(tokens[k], 'new')) k++;
  while (id(tokens[k]) && punct(tokens[k + 1], '.')) k += 2;
  if (id(tokens[k]) && punct(tokens[k + 1], '(')) {
    const prefix = objectKey(tokens, k + 2, ['prefix']);
    if (prefix !== undefined) facts.prefixes.set(local, prefix);
  }
}

const NOT_A_NAME = new Set(['function', 'class', 'async', 'new', 'await']);

export function readExport(tokens: Token[], i: number, facts: Bindings): void {
  const next = tokens[i + 1];
  const value = tokens[i + 2];
  if (
    id(next, 'default') &&
    value?.kind === 'id' &&
    !NOT_A_NAME.has(value.text) &&
    !punct(tokens[i + 3], '(') &&
    !punct(tokens[i + 3], '.')
  )
    facts.exports.set('default', value.text);
  else if ((id(next, 'const') || id(next, 'let') || id(next, 'var')) && id(tokens[i + 2])) {
    const name = (tokens[i + 2] as { text: string }).text;
    facts.exports.set(name, name);
  } else if (punct(next, '{')) {
    const end = closing(tokens, i + 1);
    const from = id(tokens[end + 1], 'from') ? str(tokens[end + 2]) : undefined;
    for (let k = i + 2; k < end; k++) {
      if (!id(tokens[k])) continue;
      const name = (tokens[k] as { text: string }).text;
      const exported =
        id(tokens[k + 1], 'as') && id(tokens[k + 2]) ? (tokens[k + 2] as { text: string }).text : name;
      if (from !== undefined) facts.imports.set(`#reexport:${exported}`, { specifier: from, member: name });
      facts.exports.set(exported, from !== undefined ? `#reexport:${exported}` : name);
      if (exported !== name) k += 2;
    }
  }
}

/** `module.exports = x`, `module.exports = { a, b }`, `exports.a = x`, `module.exports.a = x`. */
export function readCommonJsExport(tokens: Token[], i: number, facts: Bindings): void {
  let j = i;
  if (id(tokens[j], 'module') && punct(tokens[j + 1], '.')) j += 2;
  if (!id(tokens[j], 'exports')) return;
  j++;
  let name = 'default';
  if (punct(tokens[j], '.') && id(tokens[j + 1])) {
    name = (tokens[j + 1] as { text: string }).text;
    j += 2;
  }
  if (!punct(tokens[j], '=')) return;
  const value = tokens[j + 1];
  if (id(value) && (punct(tokens[j + 2], ';') || (!punct(tokens[j + 2], '.') && !punct(tokens[j + 2], '('))))
    facts.exports.set(name, (value as { text: string }).text);
  else if (punct(value, '{') && name === 'default') {
    const end = closing(tokens, j + 1);
    for (let k = j + 2; k < end; k++)
      if (
        id(tokens[k]) &&
        (punct(tokens[k + 1], ',') || punct(tokens[k + 1], '}')) &&
        !punct(tokens[k - 1], ':')
      )
        facts.exports.set((tokens[k] as { text: string }).text, (tokens[k] as { text: string }).text);
      else if (id(tokens[k]) && punct(tokens[k + 1], ':') && id(tokens[k + 2]))
        facts.exports.set((tokens[k] as { text: string }).text, (tokens[k + 2] as { text: string }).text);
  }
}
