// nodecached: a memcache server in Node, in two versions.
//   IMPL=proto (default)  @hotpath/memcache-proto's server: Buffers end to end, TCP_NODELAY,
//                         one batched write per read, the whole text/meta/binary protocol.
//   IMPL=naive            the seed's first version (naive.js): string conversion and small
//                         writes; NODELAY=1 turns Nagle's algorithm off for it.
import { createServer } from '@hotpath/memcache-proto';
import { createNaiveServer } from './naive.js';

const impl = process.env.IMPL ?? 'proto';
const port = Number(process.env.PORT ?? 11311);

if (impl === 'proto') {
  const server = createServer({ port, host: '127.0.0.1', memoryMb: 64 });
  const address = await server.listen();
  console.log(`nodecached (memcache-proto) listening on 127.0.0.1:${address.port}`);
  process.on('SIGTERM', () => server.close().then(() => process.exit(0)));
} else if (impl === 'naive') {
  const noDelay = process.env.NODELAY === '1';
  const server = createNaiveServer({ noDelay });
  server.listen(port, '127.0.0.1', () => {
    console.log(
      `nodecached (naive, Nagle ${noDelay ? 'off' : 'on'}) listening on 127.0.0.1:${server.address().port}`,
    );
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
} else {
  console.error(`IMPL must be "proto" or "naive", got ${JSON.stringify(impl)}`);
  process.exit(2);
}
