import { compareSamples } from './statistics.js';

/** Placeholder run until the compare flow lands: validates that the bundle executes. */
export async function run(): Promise<void> {
  const start = process.env.INPUT_START;
  if (!start) {
    process.exitCode = 1;
    console.log('::error::input "start" is required: the command that starts your server');
    return;
  }
  const self = compareSamples([1, 1], [1, 1]);
  console.log(`hotpath: start=${JSON.stringify(start)} (engine self-check change=${self.change})`);
}
