#!/usr/bin/env node
import { runCli } from '../dist/cli/main.js';

runCli();
