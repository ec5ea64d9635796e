// The fixed way: the body and its ETag are computed once per content version, and the
// minute timestamp once per minute.
import crypto from 'node:crypto';

let cachedMinute = 0;
let cachedUntil = 0;

export function timestamp() {
  const now = Date.now();
  if (now >= cachedUntil) {
    cachedMinute = now - (now % 60_000);
    cachedUntil = cachedMinute + 60_000;
  }
  return cachedMinute;
}

export function createEtagger() {
  let version = -1;
  let body = '';
  let etag = '';
  return function etagger(req, res, next) {
    const content = res.locals.content;
    if (content.version !== version) {
      body = JSON.stringify(content);
      etag = `"${crypto.createHash('sha1').update(body).digest('base64')}"`;
      version = content.version;
    }
    if (req.headers['if-none-match'] === etag) {
      res.send(304);
      return next(false);
    }
    res.locals.body = body;
    res.header('ETag', etag);
    next();
  };
}
