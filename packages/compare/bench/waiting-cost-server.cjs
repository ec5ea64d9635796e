// The server of bench/waiting-cost.mjs: GET /none answers a small JSON body (no downstream call),
// GET /call asks a local HTTP service (SERVICE_URL, kept alive) once, then answers the same body.
const http = require('node:http');

const service = new URL(process.env.SERVICE_URL ?? 'http://127.0.0.1:1/');
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
let served = 0;

function body() {
  const items = Array.from({ length: 20 }, (_, i) => ({ i, s: `item ${i}`, even: i % 2 === 0 }));
  return JSON.stringify({ ok: true, served, items });
}

function askService() {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: service.hostname, port: service.port, path: '/', agent },
      (response) => {
        response.resume();
        response.on('end', resolve);
      },
    );
    request.on('error', reject);
    request.end();
  });
}

http
  .createServer((req, res) => {
    served++;
    if (req.url === '/call') {
      askService().then(
        () => res.end(body()),
        (err) => {
          res.statusCode = 500;
          res.end(String(err));
        },
      );
    } else res.end(body());
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
