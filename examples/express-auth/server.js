// Express app from the seed story: /newUser and /auth hash passwords with PBKDF2
// (10 000 iterations, SHA-512). HASH_MODE=sync uses pbkdf2Sync, which blocks the event loop
// for every request; the default, async, runs the hash on libuv's thread pool.
// Not a recommended way to authenticate users: it exists to be profiled.
import crypto from 'node:crypto';
import express from 'express';

const ITERATIONS = 10_000;
const KEY_LENGTH = 64;
const DIGEST = 'sha512';
const mode = process.env.HASH_MODE ?? 'async';
if (mode !== 'sync' && mode !== 'async') {
  console.error(`HASH_MODE must be "sync" or "async", got ${JSON.stringify(mode)}`);
  process.exit(2);
}
// AUDIT_LOG=forever keeps a record of every login attempt in memory and never trims it: the
// most common leak there is (the memory story); the default, none, keeps no record.
const audit = process.env.AUDIT_LOG ?? 'none';
if (audit !== 'forever' && audit !== 'none') {
  console.error(`AUDIT_LOG must be "forever" or "none", got ${JSON.stringify(audit)}`);
  process.exit(2);
}

/** Hashes a password; the only difference between the two variants. */
function hashPassword(password, salt) {
  if (mode === 'sync') {
    return Promise.resolve(crypto.pbkdf2Sync(password, salt, ITERATIONS, KEY_LENGTH, DIGEST));
  }
  return new Promise((resolve, reject) => {
    crypto.pbkdf2(password, salt, ITERATIONS, KEY_LENGTH, DIGEST, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

const users = new Map();
const attempts = [];

/**
 * Records a login attempt, with a copy of its headers, in a list that is never trimmed — and the
 * record also holds the request itself (an easy slip: `req` is at hand), so every request object
 * stays alive with it.
 */
function recordAttempt(req, username) {
  if (audit === 'forever') attempts.push({ username, at: new Date(), headers: { ...req.headers }, req });
}

function credentials(req) {
  const username = String(req.query.username ?? '').replace(/[!@#$%^&*]/g, '');
  const password = String(req.query.password ?? '');
  return { username, password };
}

const app = express();

app.get('/newUser', async (req, res) => {
  const { username, password } = credentials(req);
  if (!username || !password || users.has(username)) return res.sendStatus(400);
  const salt = crypto.randomBytes(128).toString('base64');
  users.set(username, { salt, hash: await hashPassword(password, salt) });
  res.sendStatus(200);
});

app.get('/auth', async (req, res) => {
  const { username, password } = credentials(req);
  recordAttempt(req, username);
  const user = users.get(username);
  if (!username || !password || !user) return res.sendStatus(400);
  const hash = await hashPassword(password, user.salt);
  res.sendStatus(crypto.timingSafeEqual(user.hash, hash) ? 200 : 401);
});

// A known user so that /auth can be loaded without a setup step.
const demoSalt = crypto.randomBytes(128).toString('base64');
users.set('demo', {
  salt: demoSalt,
  hash: crypto.pbkdf2Sync('secret', demoSalt, ITERATIONS, KEY_LENGTH, DIGEST),
});

const port = Number(process.env.PORT ?? 8080);
const server = app.listen(port, '127.0.0.1', () => {
  console.log(`express-auth (${mode} PBKDF2) listening on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
