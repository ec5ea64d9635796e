// `node scripts/local-registry.mjs <tarballs dir> <port file>`: a read-only npm registry on
// 127.0.0.1 that serves the packed tarballs of one folder (what `pnpm pack` wrote) and nothing
// else, for a scope's registry (`@hotpath:registry=http://127.0.0.1:PORT/`): every other package
// comes from the registry npm is configured with. Each package's document lists the versions of
// its tarballs with their shasum and sha512 integrity, as a published package's does. Writes the
// port it listens on to the port file once it listens; stops on SIGTERM.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

const [dir, portFile] = process.argv.slice(2);
if (!dir || !portFile) {
  console.error('usage: node scripts/local-registry.mjs <tarballs dir> <port file>');
  process.exit(2);
}

const tarballs = new Map(); // file name -> bytes
const packages = new Map(); // package name -> { version: manifest }
for (const file of readdirSync(dir).filter((f) => f.endsWith('.tgz'))) {
  const bytes = readFileSync(join(dir, file));
  const manifest = JSON.parse(
    execFileSync('tar', ['-xzOf', join(dir, file), 'package/package.json'], { encoding: 'utf8' }),
  );
  tarballs.set(file, bytes);
  const versions = packages.get(manifest.name) ?? {};
  versions[manifest.version] = {
    manifest,
    file,
    shasum: createHash('sha1').update(bytes).digest('hex'),
    integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
  };
  packages.set(manifest.name, versions);
}

function packument(name, base) {
  const versions = packages.get(name);
  const list = Object.keys(versions);
  const latest = list.sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).at(-1);
  return {
    _id: name,
    name,
    'dist-tags': { latest },
    versions: Object.fromEntries(
      list.map((v) => {
        const { manifest, file, shasum, integrity } = versions[v];
        return [
          v,
          { ...manifest, _id: `${name}@${v}`, dist: { tarball: `${base}/-/${file}`, shasum, integrity } },
        ];
      }),
    ),
  };
}

const server = createServer((req, res) => {
  const base = `http://${req.headers.host}`;
  const path = decodeURIComponent((req.url ?? '/').split('?')[0]);
  if (req.method === 'GET' && path.startsWith('/-/') && tarballs.has(path.slice(3))) {
    const bytes = tarballs.get(path.slice(3));
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
    res.end(bytes);
    return;
  }
  const name = path.slice(1);
  if ((req.method === 'GET' || req.method === 'HEAD') && packages.has(name)) {
    const body = JSON.stringify(packument(name, base));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({ error: `not found: ${path} (this registry serves ${[...packages.keys()].join(', ')})` }),
  );
});
server.listen(0, '127.0.0.1', () => {
  writeFileSync(`${portFile}.tmp`, String(server.address().port));
  renameSync(`${portFile}.tmp`, portFile);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
