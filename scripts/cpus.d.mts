// Types of cpus.mjs (imported by overload-guard's tests).
export function allowedCpus(): number[];
