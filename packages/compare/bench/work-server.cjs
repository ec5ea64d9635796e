// Bench server: each request burns WORK iterations of CPU (a 25 % throughput drop is
// WORK × 4/3). Listens on $PORT.
const http = require('node:http');
const work = Number(process.env.WORK || 200000);
http
  .createServer((_req, res) => {
    let x = 0;
    for (let i = 0; i < work; i++) x += Math.sqrt(i) * 1e-9;
    res.end(String(x));
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
