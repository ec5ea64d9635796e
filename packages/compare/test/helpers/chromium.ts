import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

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

/** Headless Chromium as the report tests drive it (no sandbox: CI runs as root). */
export function launchChromium(executablePath: string): Promise<Browser> {
  return puppeteer.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/**
 * Opens a report.html at 1280 × 900 and waits until every flame graph is drawn with wide frames
 * and labels (d3 grows the frames from zero width and writes the labels after a delay). Returns
 * the page and what it logged as an error or warning, threw, or failed to load.
 */
export async function openReport(browser: Browser, file: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warn') errors.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (err) => errors.push(`pageerror: ${(err as Error).message}`));
  page.on('requestfailed', (r) => errors.push(`request: ${r.url()}`));
  await page.goto(`file://${file}`, { waitUntil: 'load' });
  await page.waitForFunction(() => document.documentElement.dataset.flameGraphs !== undefined);
  await page.waitForFunction(() =>
    [...document.querySelectorAll('[data-graph]')].every(
      (g) =>
        [...g.querySelectorAll('rect')].some((r) => Number(r.getAttribute('width')) > 100) &&
        [...g.querySelectorAll('.d3-flame-graph-label')].some((l) => l.textContent),
    ),
  );
  return { page, errors };
}
