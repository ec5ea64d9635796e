import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where dist/probe.cjs is, from the bundle (dist/), the library build (dist/…/) or the sources. */
export function probePath(): string {
  for (const candidate of ['./probe.cjs', '../probe.cjs', '../dist/probe.cjs', '../../dist/probe.cjs']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('dist/probe.cjs is missing: run the package build (pnpm --filter @hotpath/compare build)');
}
