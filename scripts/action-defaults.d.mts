// Types of action-defaults.mjs (imported by the Action's tests).
export function actionDefaults(file?: URL | string): Record<string, string>;
