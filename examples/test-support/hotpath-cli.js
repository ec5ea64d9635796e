// Where the `hotpath` CLI of this workspace is: the bin `hotpath` of whichever dependency in
// ./package.json provides it. That package.json is the one place naming the engine package, so
// moving the engine to another package changes one line there (and the lockfile).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Absolute path of the `hotpath` bin script, or undefined when no dependency provides it. */
export function hotpathCli() {
  const manifest = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
  const names = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });
  for (const name of names) {
    const dir = join(here, 'node_modules', name);
    if (!existsSync(join(dir, 'package.json'))) continue;
    const { bin } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const script = typeof bin === 'object' && bin !== null ? bin.hotpath : undefined;
    if (script) return join(dir, script);
  }
  return undefined;
}
