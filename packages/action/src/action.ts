// Entry point GitHub runs (bundled to dist/index.js by scripts/bundle.mjs).
import { run } from './main.js';

await run();
