import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ViewerAssets } from '../render/html.js';

/**
 * The viewer that scripts/build-viewer.mjs bundles into dist/: found beside the bundle (dist/,
 * the Action), from the library build (dist/run/) or from the sources (src/run/).
 */
export function viewerAssets(): ViewerAssets {
  for (const dir of ['./', '../', '../../dist/']) {
    const script = fileURLToPath(new URL(`${dir}report-viewer.js`, import.meta.url));
    const style = fileURLToPath(new URL(`${dir}report-viewer.css`, import.meta.url));
    if (existsSync(script) && existsSync(style))
      return { script: readFileSync(script, 'utf8'), style: readFileSync(style, 'utf8') };
  }
  throw new Error(
    'dist/report-viewer.js is missing: run the package build (pnpm --filter @hotpath/compare build)',
  );
}
