import { setFlagsFromString } from 'node:v8';

/**
 * Keeps V8's optimising compilers off for the first `ms` milliseconds of a CLI run. On a small
 * log the whole run takes about 0.2 s, and TurboFan (on Node 22 and later also Maglev) compiling
 * the parser's hot functions costs more than the optimised code saves before the run ends:
 * measured about 20 % of such a run, pinned to one core, where the compiler threads share it.
 * Longer runs get the optimising compilers back once the timer fires (between two chunks of the
 * log), so large logs still run optimised code. The CLI only: a library does not change the
 * flags of the process it runs in.
 */
export function deferOptimisingCompilers(ms: number): void {
  const maglev = Number(process.versions.v8.split('.')[0]) >= 12; // on by default since V8 12
  setFlagsFromString(maglev ? '--no-turbofan --no-maglev' : '--no-turbofan');
  setTimeout(() => setFlagsFromString(maglev ? '--turbofan --maglev' : '--turbofan'), ms).unref();
}
