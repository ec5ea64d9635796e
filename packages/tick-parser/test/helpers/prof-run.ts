import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

/** A small HTTP server whose route hashes a password with crypto.pbkdf2Sync. */
export const PBKDF2_SERVER = `const http = require('node:http');
const crypto = require('node:crypto');
function hashPassword(password) {
  return crypto.pbkdf2Sync(password, 'salt', 2000, 64, 'sha512').toString('hex');
}
function handleLogin(req, res) {
  res.end(hashPassword('secret' + req.url).slice(0, 16));
}
const server = http.createServer(handleLogin);
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));
// Bounded: the server stops by itself, writing a complete log.
setTimeout(() => server.close(() => process.exit(0)), Number(process.env.RUN_MS || 3000)).unref();
process.on('SIGTERM', () => process.exit(0));
`;

function get(port: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: `/u${Math.random()}`, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('error', () => resolve());
    req.end();
  });
}

/** Load for `seconds`: wrk when installed, else a small node client with 4 concurrent requests. */
async function load(port: number, seconds: number): Promise<void> {
  if (existsSync('/usr/bin/wrk')) {
    await new Promise<void>((resolve) => {
      execFile('/usr/bin/wrk', ['-t1', '-c4', `-d${seconds}s`, `http://127.0.0.1:${port}/`], () => resolve());
    });
    return;
  }
  const until = Date.now() + seconds * 1000;
  const worker = async () => {
    while (Date.now() < until) await get(port);
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

/**
 * Runs the pbkdf2 server under `node --prof` in `dir` with `seconds` of load; resolves with the
 * log's path once the server has exited (the log is then complete).
 */
export async function profilePbkdf2Server(
  dir: string,
  seconds = 2,
  extraArgs: string[] = [],
  node = process.execPath,
): Promise<string> {
  const script = join(dir, 'server.js');
  writeFileSync(script, PBKDF2_SERVER);
  const child = spawn(node, ['--prof', ...extraArgs, script], {
    cwd: dir,
    env: { ...process.env, RUN_MS: String(seconds * 1000 + 1500) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /port (\d+)/.exec(out);
        if (match) resolve(Number(match[1]));
      });
      child.on('exit', () => reject(new Error(`server exited before listening: ${out}`)));
    });
    await load(port, seconds);
    await exited;
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  return isolateLog(dir);
}

function isolateLog(dir: string): string {
  const log = readdirSync(dir).find((f) => f.startsWith('isolate') && f.endsWith('.log'));
  if (!log) throw new Error(`no isolate log in ${dir}`);
  return join(dir, log);
}

/** A JS-heavy script: small functions that move through the tiers (and the interpreter) while sampled. */
export const JS_WORKLOAD = `function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function makeRecords(n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push({ id: i, name: 'user' + i, tags: ['a', 'b', String(i % 7)] });
  return out;
}
function roundTrip(records) { return JSON.parse(JSON.stringify(records)); }
function sortByName(records) { return records.slice().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)); }
function countWords(text) {
  const counts = new Map();
  for (const word of text.split(/\\s+/)) counts.set(word, (counts.get(word) || 0) + 1);
  return counts.size;
}
class Vec { constructor(x, y) { this.x = x; this.y = y; } add(o) { return new Vec(this.x + o.x, this.y + o.y); } }
function vectors(n) { let v = new Vec(0, 0); for (let i = 0; i < n; i++) v = v.add(new Vec(i, -i)); return v.x; }
const text = 'the quick brown fox jumps over the lazy dog '.repeat(200);
const until = Date.now() + Number(process.env.RUN_MS || 1500);
let sink = 0;
while (Date.now() < until) {
  sink += fib(18) + roundTrip(makeRecords(200)).length + sortByName(makeRecords(300)).length;
  sink += countWords(text) + vectors(2000);
  // A fresh function each round keeps some code in the interpreter.
  sink += new Function('a', 'return a + ' + (sink % 13))(1);
}
console.log(sink > 0 ? 'done' : 'never');
`;

/** Runs JS_WORKLOAD under `<node> --prof` in `dir` for `ms`; resolves with the log's path. */
export async function profileJsWorkload(dir: string, node: string, ms = 1500): Promise<string> {
  const script = join(dir, 'work.js');
  writeFileSync(script, JS_WORKLOAD);
  await new Promise<void>((resolve, reject) => {
    execFile(
      node,
      ['--prof', script],
      { cwd: dir, env: { ...process.env, RUN_MS: String(ms) }, timeout: ms + 30_000 },
      (error) => (error ? reject(error) : resolve()),
    );
  });
  return isolateLog(dir);
}

/** `node --prof-process` text output for a log (of the given node binary, by default this one). */
export function profProcess(log: string, node = process.execPath): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      node,
      ['--prof-process', log],
      { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

const JS_TYPES = new Set(['JS', 'Eval', 'Script', 'Function', 'LazyCompile']);

/** From `--prof-process` text: total ticks and JS functions' self ticks, tiers summed, by label. */
export function readProfProcessText(text: string): {
  total: number;
  unaccounted: number;
  js: Map<string, number>;
} {
  const header = /\((\d+) ticks, (\d+) unaccounted/.exec(text);
  const js = new Map<string, number>();
  let inJs = false;
  for (const line of text.split('\n')) {
    if (line.startsWith(' [')) inJs = line.startsWith(' [JavaScript]');
    if (!inJs) continue;
    const match = /^\s+(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\w+): (.*)$/.exec(line);
    const [, ticks = '', type = '', name = ''] = match ?? [];
    if (!JS_TYPES.has(type)) continue;
    const label = name
      .replace(/^[~^+*-]'?/, '')
      .replace(/ \{\d+\}$/, '')
      .replace(/^<anonymous>/, '(anonymous)');
    js.set(label, (js.get(label) ?? 0) + Number(ticks));
  }
  return { total: Number(header?.[1] ?? Number.NaN), unaccounted: Number(header?.[2] ?? Number.NaN), js };
}

/**
 * How a profile's JS self ticks differ from `--prof-process`'s, function by function (label →
 * [ours, theirs]); empty when they are equal.
 */
export function selfTickDeviations(
  mine: ReadonlyMap<string, number>,
  reference: ReadonlyMap<string, number>,
): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const label of new Set([...mine.keys(), ...reference.keys()])) {
    const a = mine.get(label) ?? 0;
    const b = reference.get(label) ?? 0;
    if (a !== b) out.set(label, [a, b]);
  }
  return out;
}

/**
 * Ticks that may differ between two readers of one real log: each log is a new run, and once in
 * many CI runs (never in 90 runs in a loop, beside a full CI run and two CPU hogs) one sample
 * landed where the two readers disagree. Up to two ticks in all may move; a systematic
 * difference (a tier, a frame kind, a naming rule) moves many more in every run.
 */
export const SELF_TICK_SLACK = 2;

/** Keeps a log and `--prof-process`'s text of it under the temp dir; returns the folder. */
function keepLog(log: string, text: string): string {
  const keptIn = mkdtempSync(join(tmpdir(), 'hotpath-tick-deviation-'));
  copyFileSync(log, join(keptIn, basename(log)));
  writeFileSync(join(keptIn, 'prof-process.txt'), text);
  return keptIn;
}

/**
 * Total ticks the two readers of one log may count differently: once in a fresh-clone CI run
 * (node 20.19.0, a pbkdf2Sync server, beside a drift bench) ours counted 1886 where
 * `--prof-process` counted 1887; 60 logs of the same run in a loop beside the same load, and 90
 * the session before, agreed exactly. One tick, printed and kept when it happens; a systematic
 * difference (a kind of tick line one reader skips) differs by many in every run.
 */
export const TOTAL_TICK_SLACK = 1;

/**
 * Compares total ticks with `--prof-process`'s. A difference is printed with our warnings (a
 * tick line we skipped says why there) and the log's last bytes (a line cut when the process
 * stopped), and the log and `--prof-process`'s text are kept under the temp dir.
 */
export function checkTotalTicks(
  ours: { totalTicks: number; warnings: readonly string[] },
  theirs: number,
  log: string,
  text: string,
): { difference: number; summary: string } {
  const difference = ours.totalTicks - theirs;
  const summary = `total ticks: ours ${ours.totalTicks}, --prof-process ${theirs}`;
  if (difference === 0) return { difference, summary };
  const keptIn = keepLog(log, text);
  const tail = readFileSync(log).subarray(-200).toString('latin1');
  console.warn(
    `${summary}; log kept in ${keptIn}\n  our warnings: ${ours.warnings.join(' | ') || 'none'}\n  the log ends: ${JSON.stringify(tail)}`,
  );
  return { difference, summary: `${summary} (log kept in ${keptIn})` };
}

/**
 * Compares JS self ticks with `--prof-process`'s. A deviation is printed, function by function,
 * and the log and `--prof-process`'s text are kept under the temp dir, so the next one can be
 * read; the comparison fails when more than SELF_TICK_SLACK ticks moved. `summary` is the
 * deviation on one line, for the assertion's message.
 */
export function checkSelfTicks(
  mine: ReadonlyMap<string, number>,
  reference: ReadonlyMap<string, number>,
  log: string,
  text: string,
): { moved: number; deviations: Map<string, [number, number]>; summary: string; keptIn?: string } {
  const deviations = selfTickDeviations(mine, reference);
  const summary = [...deviations].map(([label, [a, b]]) => `${label}: ${a} vs ${b}`).join('; ');
  if (deviations.size === 0) return { moved: 0, deviations, summary };
  let moved = 0;
  for (const [a, b] of deviations.values()) moved += Math.abs(a - b);
  const keptIn = keepLog(log, text);
  const rows = [...deviations].map(([label, [a, b]]) => `  ${label}: ours ${a}, --prof-process ${b}`);
  console.warn(
    `JS self ticks differ from --prof-process by ${moved} tick(s); log kept in ${keptIn}\n${rows.join('\n')}`,
  );
  return { moved, deviations, summary, keptIn };
}
