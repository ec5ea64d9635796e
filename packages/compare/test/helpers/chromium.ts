import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * The Chromium to drive headless: $HOTPATH_CHROMIUM, else `chromium` (Debian's package, what
 * .ci/run installs), `chromium-browser` or `google-chrome` on the PATH; undefined when none.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.HOTPATH_CHROMIUM) return env.HOTPATH_CHROMIUM;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    for (const dir of (env.PATH ?? '').split(delimiter)) {
      if (!dir) continue;
      const path = join(dir, name);
      try {
        accessSync(path, constants.X_OK);
        return path;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}
