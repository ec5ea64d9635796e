// Writes hotpath.config.schema.json (for editors: "$schema" in hotpath.config.json) from the
// settings table. A test fails when the committed file differs from what this writes.
import { writeFileSync } from 'node:fs';
import { configJsonSchema } from '../dist/internal.js';

writeFileSync(
  new URL('../hotpath.config.schema.json', import.meta.url),
  `${JSON.stringify(configJsonSchema(), null, 2)}\n`,
);
