// Rooms a reader can hold in their head: no source file of compare or the Action over 400 lines,
// no function over 80. A file or function that grows past it is split into named steps.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../../', import.meta.url).pathname;
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Functions longer than `max` lines in one file's text: "name (line): n lines". */
export function longFunctions(file: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node) ||
      ts.isMethodDeclaration(node)
    ) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = (node as { name?: ts.Node }).name?.getText(source) ?? '(anonymous)';
      if (last - first + 1 > max) found.push(`${name} (line ${first + 1}): ${last - first + 1} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const files = ['packages/compare/src', 'packages/action/src'].flatMap((dir) => sources(join(ROOT, dir)));

describe('readable rooms in compare and the Action', () => {
  it(`no source file over ${MAX_FILE_LINES} lines`, () => {
    const long = files
      .map((f) => [relative(ROOT, f), readFileSync(f, 'utf8').split('\n').length] as const)
      .filter(([, lines]) => lines > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });

  it(`no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = files.flatMap((f) =>
      longFunctions(f, readFileSync(f, 'utf8'), MAX_FUNCTION_LINES).map((l) => `${relative(ROOT, f)}: ${l}`),
    );
    expect(long).toEqual([]);
  });

  it('the function check finds a long function (it can fail)', () => {
    const body = Array.from({ length: 90 }, (_, i) => `  const x${i} = ${i};`).join('\n');
    expect(longFunctions('x.ts', `function big() {\n${body}\n}\n`, MAX_FUNCTION_LINES)).toEqual([
      'big (line 1): 92 lines',
    ]);
  });
});
