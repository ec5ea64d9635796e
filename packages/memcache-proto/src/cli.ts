#!/usr/bin/env node
import { parseCliArgs, USAGE } from './cli-options.js';
import { HotpathMcError } from './errors.js';
import { createServer, SERVER_IDENTITY, SERVER_VERSION } from './server.js';

async function main(): Promise<void> {
  const action = parseCliArgs(process.argv.slice(2));
  if (action.kind === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (action.kind === 'version') {
    process.stdout.write(`${SERVER_IDENTITY} (memcached ${SERVER_VERSION} protocol)\n`);
    return;
  }
  for (const warning of action.warnings) process.stderr.write(`${warning}\n`);
  const server = createServer(action.options);
  const address = await server.listen();
  if ((action.options.verbosity ?? 0) > 0) {
    process.stderr.write(`hotpath-memcached listening on ${address.address}:${address.port}\n`);
  }
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  const message =
    error instanceof HotpathMcError ? error.message : String((error as Error)?.message ?? error);
  process.stderr.write(`hotpath-memcached: ${message}\n`);
  // Bad usage exits 2, as in every hotpath CLI; anything else (e.g. the port is taken) 1.
  process.exit(error instanceof HotpathMcError && error.code === 'HP_MC_INVALID_OPTION' ? 2 : 1);
});
