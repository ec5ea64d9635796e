// Benchmark: hotpath-ticks against its anchor, `node --prof-process`, on the same real logs in one
// run: a small log (a pbkdf2Sync server under load) and a >= 50 MB log (deep stacks, fast
// sampling). Both logs are written by real `node --prof` runs into a temporary directory that is
// removed at the end. Prints medians, the speed ratio and peak memory (max RSS) of each tool.
//
// hotpath-ticks is measured as users run it (symbols from its built-in ELF reader, demangled
// names from its cache directory, filled by an earlier run), without any cache directory
// (--no-symbol-cache: c++filt runs, as in a first run), and on its nm path (--nm nm): cold
// (--no-symbol-cache, nm reads every binary) and warm (symbol tables from its cache directory).
//
//   node bench/run.mjs   (BENCH_RUNS=5 runs per variant on the small log; on the large log
//                         2 runs of hotpath-ticks and 1 of --prof-process, which takes a minute)
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
if (!existsSync(cli)) {
  console.error('build first: pnpm --filter @hotpath/tick-parser build');
  process.exit(1);
}
const SMALL_RUNS = Number(process.env.BENCH_RUNS ?? 5);
const LARGE_RUNS = Math.max(1, Math.ceil(SMALL_RUNS / 2.5));
const LARGE_ANCHOR_RUNS = Math.max(1, Math.floor(SMALL_RUNS / 5));
const MIN_LARGE_BYTES = 50 * 1024 * 1024;
const hasTime = existsSync('/usr/bin/time');
const hasTaskset = existsSync('/usr/bin/taskset');
const hasWrk = existsSync('/usr/bin/wrk');
const pin = (core, argv) =>
  hasTaskset ? ['/usr/bin/taskset', ['-c', String(core), ...argv]] : [argv[0], argv.slice(1)];
const dir = mkdtempSync(join(tmpdir(), 'hotpath-ticks-bench-'));

const SERVER = `const http = require('node:http');
const crypto = require('node:crypto');
function hashPassword(p) { return crypto.pbkdf2Sync(p, 'salt', 2000, 64, 'sha512').toString('hex'); }
const server = http.createServer((req, res) => res.end(hashPassword('pw' + req.url).slice(0, 16)));
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
setTimeout(() => server.close(() => process.exit(0)), Number(process.env.RUN_MS)).unref();
`;

// Deep, varied stacks and crypto at the leaves: long tick lines, many distinct stacks.
const WORKLOAD = `const crypto = require('node:crypto');
const fs = require('node:fs');
function leaf(i) { return crypto.createHash('sha256').update('x' + i).digest('hex'); }
function recurse(depth, i) { return depth === 0 ? leaf(i) : recurse(depth - 1, i) + ''; }
function walk(d, i) { let s = 0; for (let k = 0; k < 200; k++) s += (k * i) % 7; return s + recurse(120, i); }
function tree(d, i) { return d % 3 === 0 ? recurse(180, i) : d % 3 === 1 ? walk(d, i) : recurse(60, i); }
// Stops once its own log has the target size (or after 120 s).
const target = Number(process.env.TARGET_BYTES);
const until = Date.now() + 120000;
const logSize = () => {
  const name = fs.readdirSync('.').find((f) => f.startsWith('isolate') && f.endsWith('.log'));
  return name ? fs.statSync(name).size : 0;
};
let n = 0;
while (Date.now() < until) {
  tree(n, n);
  if (++n % 500 === 0 && logSize() >= target) break;
}
`;

function findLog(where) {
  const name = readdirSync(where).find((f) => f.startsWith('isolate') && f.endsWith('.log'));
  return name ? join(where, name) : undefined;
}

async function smallLog() {
  const where = join(dir, 'small');
  rmSync(where, { recursive: true, force: true });
  spawnSync('mkdir', ['-p', where]);
  writeFileSync(join(where, 'server.js'), SERVER);
  const [cmd, args] = pin(0, [process.execPath, '--prof', 'server.js']);
  const child = spawn(cmd, args, {
    cwd: where,
    env: { ...process.env, RUN_MS: '4500' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const m = /port (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', () => reject(new Error('server exited early')));
  });
  if (hasWrk) {
    const [wcmd, wargs] = pin(1, ['/usr/bin/wrk', '-t1', '-c4', '-d3s', `http://127.0.0.1:${port}/`]);
    await new Promise((resolve) => execFile(wcmd, wargs, () => resolve()));
  } else {
    const until = Date.now() + 3000;
    while (Date.now() < until)
      await fetch(`http://127.0.0.1:${port}/${Math.random()}`)
        .then((r) => r.text())
        .catch(() => {});
  }
  await exited;
  return findLog(where);
}

function largeLog() {
  const where = join(dir, 'large');
  spawnSync('mkdir', ['-p', where]);
  writeFileSync(join(where, 'work.js'), WORKLOAD);
  const [cmd, args] = pin(0, [process.execPath, '--prof', '--prof-sampling-interval=100', 'work.js']);
  const target = MIN_LARGE_BYTES + 2 * 1024 * 1024; // the rest is flushed at exit
  spawnSync(cmd, args, {
    cwd: where,
    env: { ...process.env, TARGET_BYTES: String(target) },
    stdio: 'inherit',
  });
  const log = findLog(where);
  if (!log || statSync(log).size < MIN_LARGE_BYTES) throw new Error('could not write a 50 MB log');
  return log;
}

// The default cache directory ($XDG_CACHE_HOME/hotpath-ticks) of every measured run is this
// temporary one: the user's own cache neither helps nor is touched.
const env = { ...process.env, XDG_CACHE_HOME: join(dir, 'xdg-cache') };

/** Runs argv pinned to core 1; wall time by hrtime, peak RSS from /usr/bin/time. */
function measure(argv) {
  const [cmd, args] = hasTime ? pin(1, ['/usr/bin/time', '-f', 'maxrss=%M', ...argv]) : pin(1, argv);
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed: ${r.stderr}`);
  const rss = /maxrss=(\d+)/.exec(r.stderr ?? '');
  const header = /\((\d+) ticks, (\d+) unaccounted/.exec(r.stdout);
  return {
    seconds,
    rssMb: rss ? Number(rss[1]) / 1024 : Number.NaN,
    ticks: Number(header?.[1]),
    unaccounted: Number(header?.[2]),
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function compare(name, log, runs, anchorRuns) {
  const cacheDir = join(dir, 'symbol-cache');
  const nm = existsSync('/usr/bin/nm') ? '/usr/bin/nm' : 'nm';
  const variants = [
    ['hotpath-ticks', [process.execPath, cli, log]],
    ['hotpath-ticks --no-symbol-cache', [process.execPath, cli, log, '--no-symbol-cache']],
    ['hotpath-ticks --nm (cold)', [process.execPath, cli, log, '--nm', nm, '--no-symbol-cache']],
    ['hotpath-ticks --nm (warm cache)', [process.execPath, cli, log, '--nm', nm, '--symbol-cache', cacheDir]],
  ];
  measure(variants[0][1]); // fills the cache of demangled names, as any earlier run has
  measure(variants[3][1]); // fills the cache for "warm"
  const results = variants.map(() => []);
  const anchor = [];
  for (let i = 0; i < runs; i++) {
    // Interleaved so machine noise hits all variants alike.
    for (const [k, [, argv]] of variants.entries()) results[k].push(measure(argv));
    if (i < anchorRuns) anchor.push(measure([process.execPath, '--prof-process', log]));
  }
  const summary = (rs) => ({
    s: median(rs.map((r) => r.seconds)),
    rss: Math.max(...rs.map((r) => r.rssMb)),
    r: rs[0],
  });
  const a = summary(anchor);
  const mb = statSync(log).size / 1024 / 1024;
  console.log(
    `\n${name}: ${mb.toFixed(1)} MB, ${results[0][0].ticks} ticks (--prof-process: ${a.r.ticks}); medians of ${runs} runs (--prof-process: ${anchorRuns})`,
  );
  console.log('  tool                              time     MB/s  peak RSS  unaccounted   vs --prof-process');
  const row = (label, x) =>
    console.log(
      `  ${label.padEnd(32)}${x.s.toFixed(2).padStart(6)} s${(mb / x.s).toFixed(1).padStart(8)}${x.rss.toFixed(0).padStart(7)} MB${String(x.r.unaccounted).padStart(8)} of ${x.r.ticks}  ${(a.s / x.s).toFixed(1)}x faster, ${(x.rss / a.rss).toFixed(2)}x memory`,
    );
  const speedUps = variants.map(([label], k) => {
    const x = summary(results[k]);
    row(label, x);
    return a.s / x.s;
  });
  row('node --prof-process', a);
  return { elf: speedUps[0], first: speedUps[1], nmCold: speedUps[2], nmWarm: speedUps[3] };
}

try {
  console.log(
    `hotpath-ticks bench (node ${process.version}, ${hasTaskset ? 'tools pinned to core 1' : 'no taskset'})`,
  );
  const small = await smallLog();
  const large = largeLog();
  const r1 = compare('small log (pbkdf2Sync server under load)', small, SMALL_RUNS, SMALL_RUNS);
  const r2 = compare('large log (deep stacks, 100 us sampling)', large, LARGE_RUNS, LARGE_ANCHOR_RUNS);
  console.log(
    `\nsummary (speed-up over node --prof-process, goal >= 10x on the small log): small log ${r1.elf.toFixed(1)}x (no cache: ${r1.first.toFixed(1)}x; --nm: ${r1.nmCold.toFixed(1)}x cold, ${r1.nmWarm.toFixed(1)}x warm); large log ${r2.elf.toFixed(1)}x (no cache: ${r2.first.toFixed(1)}x; --nm: ${r2.nmCold.toFixed(1)}x cold, ${r2.nmWarm.toFixed(1)}x warm)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
