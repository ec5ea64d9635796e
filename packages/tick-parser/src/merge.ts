import { UNKNOWN_FRAME } from './function-label.js';
import type { Profile, ProfileMeta } from './model.js';
import { ProfileBuilder } from './profile-builder.js';

/**
 * Adds profiles together (e.g. several rounds of the same server): functions with the same kind,
 * name, file and position are one function; identical stacks are summed; warnings are kept.
 */
export function mergeProfiles(profiles: readonly Profile[]): Profile {
  const builder = new ProfileBuilder();
  const warnings: string[] = [];
  let gcTicks = 0;
  let unaccountedTicks = 0;
  const scratch: number[] = [];
  for (const profile of profiles) {
    const ids = profile.functions.map((fn) => {
      const id = builder.internFunction({
        name: fn.name,
        file: fn.file,
        line: fn.line,
        column: fn.column,
        kind: fn.kind,
      });
      for (const tier of fn.tiers ?? []) builder.addTier(id, tier);
      return id;
    });
    for (const stack of profile.stacks) {
      scratch.length = 0;
      for (const frame of stack.frames) scratch.push(ids[frame] ?? builder.internFunction(UNKNOWN_FRAME));
      builder.addStack(scratch, scratch.length, stack.count);
    }
    for (const warning of profile.warnings) warnings.push(warning);
    gcTicks += profile.meta?.gcTicks ?? 0;
    unaccountedTicks += profile.meta?.unaccountedTicks ?? 0;
  }
  const source = profiles[0]?.source ?? 'cpuprofile';
  const meta: ProfileMeta = { gcTicks, unaccountedTicks };
  return builder.build(source, [...new Set(warnings)], meta);
}
