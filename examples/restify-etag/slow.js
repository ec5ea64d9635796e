// The slow way, as first written: every request re-serialises the whole document, hashes all
// of it for the ETag, and rebuilds the minute timestamp by string formatting and parsing.
import crypto from 'node:crypto';

export function timestamp() {
  const now = new Date();
  const minute = `${now.toISOString().slice(0, 16)}:00.000Z`;
  return Date.parse(minute);
}

export function createEtagger() {
  return function etagger(req, res, next) {
    const body = JSON.stringify(res.locals.content);
    const etag = `"${crypto.createHash('sha512').update(body).digest('hex')}"`;
    if (req.headers['if-none-match'] === etag) {
      res.send(304);
      return next(false);
    }
    res.locals.body = body;
    res.header('ETag', etag);
    next();
  };
}
