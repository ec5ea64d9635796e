import { cpus, hostname } from 'node:os';
import type { Machine } from '../model.js';

/** The machine this process runs on: what a shard records as the one that measured it. */
export function thisMachine(env: NodeJS.ProcessEnv = process.env): Machine {
  const cpu = cpus();
  return {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? 'unknown',
    name: env.RUNNER_NAME || hostname() || undefined,
  };
}
