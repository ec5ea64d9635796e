#!/usr/bin/env node
// The CLI bundled into one file (scripts/build-cli.mjs): it starts in half the time.
import { runCli } from '../dist/hotpath.mjs';

runCli();
