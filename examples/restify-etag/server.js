// restify REST server from the seed story: GET /seed/v1 returns a large JSON document with
// an ETag. ETAG_MODE=slow (default) or fast picks the implementation of the middleware and
// the timestamp helper; GUARD=1 sheds load with @hotpath/overload-guard (503 + Retry-After).
import restify from 'restify';
import { loadSeed } from './content.js';

const mode = process.env.ETAG_MODE ?? 'slow';
if (mode !== 'slow' && mode !== 'fast') {
  console.error(`ETAG_MODE must be "slow" or "fast", got ${JSON.stringify(mode)}`);
  process.exit(2);
}
const { createEtagger, timestamp } = await import(mode === 'slow' ? './slow.js' : './fast.js');

// SEED_RECORDS: how many records the document holds (4000, about 1 MB): fewer make every
// request cheaper (the overload story's test uses 1000, so its capacity steps last a second).
const records = process.env.SEED_RECORDS ?? '4000';
if (!/^[1-9]\d{0,6}$/.test(records)) {
  console.error(`SEED_RECORDS must be a whole number from 1 to 9999999, got ${JSON.stringify(records)}`);
  process.exit(2);
}
const content = loadSeed(Number(records));
const server = restify.createServer({ name: 'restify-etag' });

if (process.env.GUARD === '1') {
  const { createGuard } = await import('@hotpath/overload-guard');
  const guard = createGuard({ maxEventLoopDelay: 50, retryAfter: 1 });
  server.pre(guard.restify());
  server.on('close', () => guard.close());
}

server.use((_req, res, next) => {
  res.locals = { content };
  next();
});
server.use(createEtagger());

server.get('/seed/v1', (_req, res, next) => {
  res.header('Last-Modified', new Date(timestamp()).toUTCString());
  res.header('Content-Type', 'application/json');
  res.sendRaw(200, res.locals.body);
  next();
});

const port = Number(process.env.PORT ?? 3000);
server.listen(port, '127.0.0.1', () => {
  console.log(
    `restify-etag (${mode}${process.env.GUARD === '1' ? ', guarded' : ''}) listening on ${server.url}`,
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
