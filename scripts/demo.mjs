// `pnpm demo [express|restify|nodecached]`: a real base-vs-head comparison on an example.
// Delegates to the hotpath CLI once it is built; until then, runs the best end-to-end slice:
// the PBKDF2 story with two real servers, real load and a real CPU profile of the head.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCpuProfile } from '@hotpath/tick-parser';

const root = new URL('..', import.meta.url).pathname;
const cli = join(root, 'packages/action/dist/cli.js');
if (existsSync(cli)) {
  const child = spawn(process.execPath, [cli, 'demo', ...process.argv.slice(2)], { stdio: 'inherit' });
  child.on('exit', (code) => process.exit(code ?? 1));
} else {
  await fallbackDemo();
}

async function fallbackDemo() {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-demo-'));
  const server = (sync) => `
    const crypto = require('node:crypto');
    process.on('SIGINT', () => process.exit(0));
    require('node:http').createServer((req, res) => {
      const done = (err, key) => res.end(key.toString('hex'));
      ${sync ? "done(null, crypto.pbkdf2Sync('secret', 'salt', 10000, 64, 'sha512'));" : "crypto.pbkdf2('secret', 'salt', 10000, 64, 'sha512', done);"}
    }).listen(0, '127.0.0.1', function () { process.send(this.address().port); });`;
  const measure = async (label, sync) => {
    const file = join(dir, `${label}.cjs`);
    writeFileSync(file, server(sync));
    const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', join(dir, label), file], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const port = await new Promise((resolve) => child.once('message', resolve));
    let done = 0;
    const end = Date.now() + 5000;
    const worker = () =>
      new Promise((resolve) => {
        const next = () => {
          if (Date.now() >= end) return resolve();
          request({ port, host: '127.0.0.1', path: '/auth' }, (res) => {
            res.resume();
            res.on('end', () => {
              done++;
              next();
            });
          }).end();
        };
        next();
      });
    await Promise.all(Array.from({ length: 8 }, worker));
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
    const profiles = readdirSync(join(dir, label));
    const profile = parseCpuProfile(readFileSync(join(dir, label, profiles[0]), 'utf8'));
    return { label, rps: done / 5, profile };
  };
  console.log('hotpath demo (engine slice): pbkdf2 (base) vs pbkdf2Sync (head), 8 connections, 5 s each\n');
  const base = await measure('base', false);
  const head = await measure('head', true);
  console.log(
    `req/s   base ${base.rps.toFixed(1)}   head ${head.rps.toFixed(1)}   change ${(((head.rps - base.rps) / base.rps) * 100).toFixed(1)} %`,
  );
  console.log('\nhottest functions in head (self %):');
  for (const f of head.profile.functions.slice(0, 5)) {
    console.log(
      `  ${((f.self / head.profile.totalTicks) * 100).toFixed(1).padStart(5)} %  ${f.name}  ${f.file}:${f.line}`,
    );
  }
}
