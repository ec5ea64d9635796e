import type { LevelledSettings } from '../../src/measure/load-level.js';
import type { Settings } from '../../src/settings/schema.js';

/** Settings for runRound/measureRounds, whose tests set their connections: checked to be numbers. */
export function levelled(settings: Settings): LevelledSettings {
  return {
    ...settings,
    scenarios: settings.scenarios.map((s) => {
      if (s.connections === 'auto' || typeof s.rate === 'string')
        throw new Error(`test settings: scenario ${s.name} needs a number of connections and a numeric rate`);
      return { ...s, connections: s.connections, rate: s.rate };
    }),
  };
}
