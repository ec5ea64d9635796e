import type { Measurements, Shard, SideInfo } from '../../src/model.js';
import type { Settings } from '../../src/settings/schema.js';

/** The machine recorded data says it measured on. */
export const RECORDED_MACHINE = {
  node: 'v20.20.2',
  platform: 'linux x64',
  cpus: 2,
  cpuModel: 'Recorded CPU',
  name: 'recorder',
};

/** Recorded measurements as the Shard that measure() would have made of them. */
export function shardOf(
  measurements: Measurements,
  settings: Settings,
  sides: Record<'base' | 'head', SideInfo> = {
    base: { command: 'node server.js', cwd: '/b' },
    head: { command: 'node server.js', cwd: '/h' },
  },
  shard = { index: 1, total: 1 },
): Shard {
  return { shard, sides, settings, measurements, machine: RECORDED_MACHINE, warnings: [] };
}
