#!/usr/bin/env node
// Committed entry point, so the bin exists before the build (pnpm links it at install).
import '../dist/cli.js';
