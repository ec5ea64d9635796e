// CPU leases for the measured test files, shared by every vitest process on the machine (the
// packages' test runs, side by side, and another checkout's): a file holds one CPU while it runs
// — at most one file per CPU machine-wide — or every CPU (a file that measures placement or pins
// its own processes). A lease is a file `cpu-N` in a directory of the temp folder, created with
// O_EXCL and holding `pid:n` (the owner and its own count of leases taken); a lease whose owner
// is gone is taken over. A file that wants
// every CPU first takes the gate, then each CPU in order: while the gate is held by another live
// process, a file wanting one CPU waits, so the gate's owner is not starved, and two such files
// cannot deadlock (one gate, one order).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DIR = join(tmpdir(), `hotpath-test-cpus-${process.getuid?.() ?? 'user'}`);
const POLL_MS = 100;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function alive(pid) {
  if (!(pid > 0)) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

// Each lease this process takes is marked with its pid and a number of its own: one process may
// run several files one after another (or at once, in a threads pool), and a lease is one file's.
let taken = 0;
const held = new Map();

/** The owner's pid and mark in a lease file; undefined while it is being written or gone. */
function ownerOf(path) {
  try {
    const [pid, mark] = readFileSync(path, 'utf8').split(':');
    return pid && mark ? { pid: Number(pid), mark } : undefined;
  } catch {
    return undefined;
  }
}

/** Takes `name`; true when taken (a dead owner's lease is taken over at the next poll). */
function take(name) {
  const path = join(DIR, name);
  const mark = `${process.pid}:${++taken}`;
  try {
    writeFileSync(path, mark, { flag: 'wx' });
    held.set(name, mark);
    return true;
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
  }
  const owner = ownerOf(path);
  // gone meanwhile, half written (its owner is writing it), or a live owner's: wait
  if (!owner || alive(owner.pid)) return false;
  // still the dead owner's (another waiter may have taken it over meanwhile)
  const again = ownerOf(path);
  if (again && again.pid === owner.pid && again.mark === owner.mark) rmSync(path, { force: true });
  return false;
}

function release(name) {
  const path = join(DIR, name);
  const mark = held.get(name);
  try {
    if (mark && readFileSync(path, 'utf8') === mark) rmSync(path, { force: true });
  } catch {
    // gone
  }
  held.delete(name);
}

function gateHeldByOther() {
  const owner = ownerOf(join(DIR, 'gate'));
  return owner !== undefined && `${owner.pid}:${owner.mark}` !== held.get('gate') && alive(owner.pid);
}

process.once('exit', () => {
  for (const name of [...held.keys()]) release(name);
});

/**
 * Waits for one CPU of `cpus` (or, with `every`, for all of them) and resolves to the CPUs
 * leased; `releaseCpus()` gives them back.
 * @param {number[]} cpus
 * @param {{ every?: boolean }} [options]
 * @returns {Promise<number[]>}
 */
export async function leaseCpus(cpus, { every = false } = {}) {
  mkdirSync(DIR, { recursive: true });
  if (every) {
    while (!take('gate')) await sleep(POLL_MS);
    for (const cpu of cpus) while (!take(`cpu-${cpu}`)) await sleep(POLL_MS);
    return [...cpus];
  }
  for (;;) {
    if (!gateHeldByOther()) for (const cpu of cpus) if (take(`cpu-${cpu}`)) return [cpu];
    await sleep(POLL_MS);
  }
}

/** Gives back every lease this process holds. */
export function releaseCpus() {
  for (const name of [...held.keys()].reverse()) release(name);
}
