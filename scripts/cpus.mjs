// The CPUs this process may run on (Linux: /proc/self/status's Cpus_allowed_list), for the test
// harnesses that pin processes (scripts/vitest-pin.mjs, overload-guard's load test). Elsewhere,
// or unreadable: an empty list, and nothing is pinned.
import { readFileSync } from 'node:fs';

/** @returns {number[]} */
export function allowedCpus() {
  let text;
  try {
    text = /^Cpus_allowed_list:\s*(.+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  } catch {
    return [];
  }
  const cpus = [];
  for (const part of (text ?? '').trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return [];
    for (let c = Number(m[1]); c <= Number(m[2] ?? m[1]); c++) cpus.push(c);
  }
  return cpus;
}
