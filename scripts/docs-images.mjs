// `pnpm docs:images`: the pictures in docs/images/, made from a real, short run so they never
// drift from the product. One comparison of examples/express-auth (base: the asynchronous hash,
// head: a change to pbkdf2Sync, the regression hotpath is for), then, in headless Chromium
// (Debian's `chromium`, or $HOTPATH_CHROMIUM):
//   comment.png    the PR comment as GitHub shows it (GFM rendered by marked, GitHub's CSS)
//   terminal.png   the terminal report (its ANSI colours turned into HTML by ansi-to-html)
//   report-html.png, flamegraph-diff.png   the top of report.html and its differential flame graph
// Then a second comparison, the memory story (head keeps every login attempt: AUDIT_LOG=forever):
//   comment-leak.png      the comment's verdict and metrics, its memory block and the tables of what
//                         allocates and what stays alive
//   report-html-memory.png   report.html's per-round charts of retained and allocated bytes
// The comment's verdict icons need an emoji font (Debian: fonts-noto-color-emoji).
import { accessSync, constants, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import AnsiToHtml from 'ansi-to-html';
import { marked } from 'marked';
import puppeteer from 'puppeteer-core';

const root = new URL('..', import.meta.url).pathname;
const out = join(root, 'docs/images');
const work = join(root, '.hotpath/docs-images');
const require = createRequire(import.meta.url);

function findChromium() {
  if (process.env.HOTPATH_CHROMIUM) return process.env.HOTPATH_CHROMIUM;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome'])
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      try {
        accessSync(join(dir, name), constants.X_OK);
        return join(dir, name);
      } catch {
        // not here
      }
    }
  return undefined;
}

const chromium = findChromium();
if (!chromium) {
  console.error('pnpm docs:images needs Chromium: apt-get install chromium (or set HOTPATH_CHROMIUM)');
  process.exit(1);
}
let compare;
let render;
try {
  ({ compare, render } = await import('../packages/compare/dist/index.js'));
} catch {
  console.error('pnpm docs:images needs the packages built: run pnpm build');
  process.exit(1);
}

// A real run as a user's first one runs (rounds: auto, the default), kept short: 2 s windows and
// at most a minute of rounds.
const server = (mode) => `HASH_MODE=${mode} node server.js`;
console.log('docs:images: comparing examples/express-auth (async → sync hashing), rounds auto (max 60 s)…');
const report = await compare({
  cwd: join(root, 'examples/express-auth'),
  baseStart: server('async'),
  headStart: server('sync'),
  url: '/auth?username=demo&password=secret',
  connections: 20,
  rounds: 'auto',
  maxTime: 60,
  duration: 2,
  warmup: 1,
  out: work,
  onProgress: (e) => process.stdout.write(`  ${e.message}\n`),
});
const text = render(report, { color: true, markdown: {} });

console.log(
  'docs:images: comparing examples/express-auth (an audit log kept forever), rounds auto (max 90 s)…',
);
const leakWork = join(work, 'leak');
const leak = await compare({
  cwd: join(root, 'examples/express-auth'),
  baseStart: 'node server.js',
  headStart: 'AUDIT_LOG=forever node server.js',
  url: '/auth?username=demo&password=secret',
  connections: 20,
  rounds: 'auto',
  // the default windows: a hashing route serves ~200 requests a second, and a short window's
  // requests are too few to tell bytes per request from a heap's own movement
  maxTime: 90,
  out: leakWork,
  onProgress: (e) => process.stdout.write(`  ${e.message}\n`),
});
const leakText = render(leak, { color: false, markdown: {} });

const page = (title, style, body) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title><style>${style}</style></head><body>${body}</body></html>`;

// The comment: GitHub-flavoured markdown to HTML, in GitHub's markdown CSS, at a PR's width.
const githubCss = readFileSync(require.resolve('github-markdown-css/github-markdown-light.css'), 'utf8');
const commentHtml = page(
  'comment',
  `${githubCss}\nbody{margin:0;background:#fff}.markdown-body{box-sizing:border-box;width:1012px;padding:24px;border:1px solid #d1d9e0;border-radius:6px;margin:16px}`,
  `<article class="markdown-body">${marked.parse(text.markdown, { gfm: true })}</article>`,
);
// The terminal: ANSI colours as HTML (text escaped), in a dark terminal.
const ansi = new AnsiToHtml({ escapeXML: true, fg: '#d0d0d0', bg: '#1e1e1e' });
const terminalHtml = page(
  'terminal',
  'body{margin:0;background:#fff}pre{display:inline-block;margin:16px;padding:16px 20px;background:#1e1e1e;color:#d0d0d0;border-radius:8px;font:13px/1.45 "DejaVu Sans Mono",Menlo,Consolas,monospace}',
  `<pre>$ hotpath compare\n${ansi.toHtml(text.terminal)}</pre>`,
);
// The leak's comment: its verdict and metrics, then from its memory block on (the hot functions
// between them left out: the first picture shows them).
const hotAt = leakText.markdown.search(/^#### Hot functions/m);
const memoryAt = leakText.markdown.search(/^\| Event loop \/ memory/m);
const memoryMarkdown =
  hotAt > 0 && memoryAt > hotAt
    ? `${leakText.markdown.slice(0, hotAt)}\n${leakText.markdown.slice(memoryAt)}`
    : leakText.markdown;
const leakCommentHtml = page(
  'comment-leak',
  `${githubCss}\nbody{margin:0;background:#fff}.markdown-body{box-sizing:border-box;width:1012px;padding:24px;border:1px solid #d1d9e0;border-radius:6px;margin:16px}`,
  `<article class="markdown-body">${marked.parse(memoryMarkdown, { gfm: true })}</article>`,
);
mkdirSync(work, { recursive: true });
writeFileSync(join(work, 'comment.html'), commentHtml);
writeFileSync(join(work, 'comment-leak.html'), leakCommentHtml);
writeFileSync(join(work, 'terminal.html'), terminalHtml);

mkdirSync(out, { recursive: true });
const browser = await puppeteer.launch({ executablePath: chromium, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const tab = await browser.newPage();
  await tab.setViewport({ width: 1280, height: 900, deviceScaleFactor: 1 });
  const errors = [];
  tab.on('pageerror', (err) => errors.push(err.message));
  tab.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  const shoot = async (file, selector, name) => {
    await tab.goto(`file://${file}`, { waitUntil: 'load' });
    const el = await tab.$(selector);
    if (!el) throw new Error(`${file} has no ${selector}`);
    await el.screenshot({ path: join(out, name) });
    console.log(`  docs/images/${name}`);
  };
  await shoot(join(work, 'comment.html'), '.markdown-body', 'comment.png');
  await shoot(join(work, 'terminal.html'), 'pre', 'terminal.png');
  // report.html: wait until d3 has drawn every frame and label.
  await tab.goto(`file://${join(work, 'report.html')}`, { waitUntil: 'load' });
  await tab.waitForFunction(() =>
    [...document.querySelectorAll('[data-graph]')].every((g) =>
      [...g.querySelectorAll('.d3-flame-graph-label')].some((l) => l.textContent),
    ),
  );
  await tab.screenshot({
    path: join(out, 'report-html.png'),
    clip: { x: 0, y: 0, width: 1280, height: 900 },
  });
  console.log('  docs/images/report-html.png');
  const diff = await tab.$('[data-graph="diff"]');
  if (!diff) throw new Error('report.html has no differential flame graph');
  await diff.screenshot({ path: join(out, 'flamegraph-diff.png') });
  console.log('  docs/images/flamegraph-diff.png');
  await shoot(join(work, 'comment-leak.html'), '.markdown-body', 'comment-leak.png');
  // report.html of the leak: its per-round charts, retained and allocated bytes.
  await tab.goto(`file://${join(leakWork, 'report.html')}`, { waitUntil: 'load' });
  const charts = await tab.$$('.charts');
  const memoryCharts = charts[charts.length - 1];
  if (!memoryCharts) throw new Error("the leak's report.html has no per-round charts");
  await memoryCharts.screenshot({ path: join(out, 'report-html-memory.png') });
  console.log('  docs/images/report-html-memory.png');
  if (errors.length) throw new Error(`the pages logged errors: ${errors.join('; ')}`);
} finally {
  await browser.close();
}
const size = readFileSync(join(work, 'report.html')).length;
console.log(`report.html of this run: ${(size / 1024).toFixed(0)} KB (${work})`);
