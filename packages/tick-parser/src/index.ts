export { parseCpuProfile } from './cpuprofile.js';
export type { FunctionEntry, FunctionKind, Profile } from './model.js';
