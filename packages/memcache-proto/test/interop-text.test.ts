import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type MemcachedServer } from '../src/index.js';
import { exchange, type RealMemcached, startRealMemcached } from './helpers.js';

/** Each scenario runs on a fresh key prefix against both servers; replies must match byte for byte. */
const scenarios: [string, string][] = [
  ['set then get', 'set $a 0 0 1\r\nx\r\nget $a\r\n'],
  ['bad data chunk resyncs', 'set $a 0 0 1\r\nxyz\r\nget $a\r\n'],
  ['get without key', 'get\r\n'],
  ['commands are case-sensitive', 'GET $a\r\n'],
  ['empty line', '\r\n'],
  ['negative length', 'set $a 0 0 -1\r\n'],
  ['verbosity without level', 'verbosity\r\n'],
  ['verbosity not a number', 'verbosity x\r\n'],
  ['verbosity noreply', 'verbosity 1 noreply\r\n'],
  ['incr without args', 'incr\r\n'],
  ['decr pads, incr wraps', 'set $n 0 0 2\r\n10\r\ndecr $n 1\r\nget $n\r\nincr $n 18446744073709551615\r\n'],
  [
    'incr wrap and decr floor',
    'set $e 0 0 1\r\n1\r\nincr $e 18446744073709551615\r\nincr $e 2\r\ndecr $e 100\r\n',
  ],
  ['incr bad delta', 'incr $a -1\r\n'],
  ['incr non-numeric', 'set $c 0 0 3\r\nabc\r\nincr $c 1\r\nset $d 0 0 1\r\n \r\nincr $d 5\r\n'],
  ['incr missing', 'incr $m 1\r\ndecr $m 1\r\n'],
  ['delete with time', 'delete $a 5\r\ndelete $a 0\r\ndelete $a noreply\r\n'],
  ['flush_all bad delay', 'flush_all x\r\n'],
  ['stats unknown group', 'stats foo\r\n'],
  ['noreply suppresses bad data chunk', 'set $b 0 0 1 noreply\r\nxx\r\n'],
  ['touch and gat bad exptime', 'touch $a x\r\ngat x $a\r\n'],
  ['gets of missing keys', 'gets $a $b\r\n'],
  ['cas bad unique', 'cas $a 0 0 1 abc\r\nx\r\n'],
  [
    'flags wrap to 32 bits',
    'set $a 4294967296 0 1\r\nx\r\nget $a\r\nset $a 18446744073709551615 0 1\r\nx\r\nget $a\r\n',
  ],
  ['negative flags', 'set $a -1 0 1\r\nx\r\n'],
  [
    'append prepend add replace',
    'set $k 0 0 1\r\nx\r\nappend $k 0 0 1\r\ny\r\nprepend $k 0 0 1\r\nz\r\nget $k\r\nappend $z 0 0 1\r\nx\r\nadd $k 0 0 1\r\nx\r\nreplace $z 0 0 1\r\nx\r\n',
  ],
  ['negative exptime expires now', 'set $a 0 -1 1\r\nx\r\nget $a\r\n'],
  ['touch noreply', 'touch $a 10 noreply\r\n'],
  ['gets without key', 'gets\r\n'],
  ['extra spaces', 'set    $a   0 0 1  \r\nx\r\nget  $a  \r\n'],
  ['bare newline', 'set $a 0 0 1\nx\r\nget $a\n'],
  ['cas on missing', 'cas $q 0 0 1 1\r\nx\r\n'],
  ['too many tokens', 'set $a 0 0 1 2 3\r\nx\r\n'],
  ['empty value', 'set $a 0 0 0\r\n\r\nget $a\r\n'],
  ['touch and gat hit', 'set $t 5 0 2\r\nhi\r\ntouch $t 100\r\ngat 100 $t $u\r\ntouch $u 1\r\n'],
  ['key of 250 bytes', `set ${'k'.repeat(250)} 0 0 1\r\nx\r\nget ${'k'.repeat(250)}\r\n`],
  ['key of 251 bytes', `set ${'k'.repeat(251)} 0 0 1\r\n`],
  ['multi-get with a long key answers only the error', `get $a ${'k'.repeat(251)}\r\n`],
  ['pipelined noreply sets', 'set $a 0 0 1 noreply\r\n1\r\nset $b 0 0 1 noreply\r\n2\r\nget $a $b\r\n'],
  ['quit closes', 'set $a 0 0 1\r\nx\r\nquit\r\nget $a\r\n'],
  ['delete hit', 'set $a 0 0 1\r\nx\r\ndelete $a\r\nget $a\r\n'],
  [
    'meta get flags',
    'ms $m 2\r\nhi\r\nmg $m v\r\nmg $m s f t v\r\nmg $m k O99\r\nmg $z v\r\nmg $z v q\r\nmg $m\r\n',
  ],
  [
    'meta set modes',
    'ms $m 2 T100 F5\r\nhi\r\nmg $m f t s v\r\nms $m 2 ME\r\nxx\r\nms $r 2 MR\r\nxx\r\nms $m 1 MA\r\n!\r\nmg $m v\r\nms $m 2 MX\r\nxx\r\n',
  ],
  [
    'meta delete and arithmetic',
    'md $m\r\nmd $m\r\nmd $m q\r\nma $c\r\nma $c N0 J10\r\nma $c v\r\nma $c MD D3 v\r\nma $c q\r\n',
  ],
  ['meta vivify and win flags', 'mg $v N30 v\r\nmg $v v\r\nmg $v v k t\r\nms $v 1\r\nx\r\nmg $v v\r\n'],
  ['meta base64 key', 'ms bTE= 1 b\r\nx\r\nmg bTE= b k v\r\n'],
  ['meta errors', 'mg\r\nmg $a !\r\nmg $a v v\r\nms $a x\r\nms $a 2 q\r\nab\r\nms $a 2 q\r\nabc\r\n'],
  [
    'meta cas and quiet',
    'ms $c 1\r\n5\r\nms $c 1 C1\r\n6\r\nma $c D5 v q\r\nma $y q\r\nma $c MD D100 v t\r\n',
  ],
  ['mn', 'mn\r\n'],
];

describe('text protocol, byte for byte against memcached', () => {
  let real: RealMemcached;
  let ours: MemcachedServer;

  beforeAll(async () => {
    real = await startRealMemcached();
    ours = createServer({ port: 0 });
    await ours.listen();
  });
  afterAll(async () => {
    await real?.stop();
    await ours?.close();
  });

  it.each(scenarios.map(([name, text], i) => [name, text.replaceAll('$', `s${i}_`)]))(
    '%s',
    async (_name, request) => {
      const expected = await exchange(real.port, request);
      expect(await exchange(ours.port, request)).toBe(expected);
    },
  );

  it('gives the same replies when the request arrives one byte at a time', async () => {
    // quit closes; memcached drops replies queued before a bad multi-get key, so leave both out.
    const request = scenarios
      .map(([name, text], i): [string, string] => [name, text.replaceAll('$', `f${i}_`)])
      .filter(([name, text]) => !text.includes('quit') && !name.includes('251') && !name.includes('long key'))
      .map(([, text]) => text)
      .join('');
    const expected = await exchange(real.port, request);
    expect(await exchange(ours.port, request, Buffer.byteLength(request))).toBe(expected);
  });

  it('gets and gets cas agree in shape (cas values differ per server)', async () => {
    const request = 'set gc 3 0 2\r\nab\r\ngets gc\r\n';
    const mask = (s: string) => s.replace(/ \d+\r\nab/, ' <cas>\r\nab');
    expect(mask(await exchange(ours.port, request))).toBe(mask(await exchange(real.port, request)));
  });
});
