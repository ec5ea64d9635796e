import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HPACK_ERROR_INVALID, HPACK_ERROR_TOO_LARGE, HpackDecoder, HpackEncoder } from '../src/hpack.js';
import { HUFFMAN_CODES, huffmanDecode, huffmanEncode, huffmanLength } from '../src/hpack-huffman.js';

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex');

function decodeHuffman(bytes: Buffer): string | null {
  const out = Buffer.alloc(bytes.length * 2 + 8);
  const end = huffmanDecode(bytes, 0, bytes.length, out, 0);
  return end < 0 ? null : out.subarray(0, end).toString('latin1');
}

describe('HPACK Huffman code (RFC 7541 Appendix B)', () => {
  it('rebuilds the codes of the RFC table from the code lengths', () => {
    // A sample of rows of Appendix B across every length.
    const rows: [number, number][] = [
      [0, 0x1ff8],
      [1, 0x7fffd8],
      [10, 0x3ffffffc],
      [32, 0x14],
      [33, 0x3f8],
      [48, 0x0],
      [58, 0x5c],
      [92, 0x7fff0],
      [126, 0x1ffd],
      [127, 0xffffffc],
      [128, 0xfffe6],
      [153, 0x1fffdc],
      [199, 0x1ffffec],
      [203, 0x7ffffde],
      [220, 0xffffffd],
      [248, 0x7ffffeb],
      [255, 0x3ffffee],
      [256, 0x3fffffff],
    ];
    for (const [symbol, code] of rows) expect(HUFFMAN_CODES[symbol], `symbol ${symbol}`).toBe(code);
  });

  it('encodes and decodes the RFC examples (C.4.1, C.6.1)', () => {
    const out = Buffer.alloc(64);
    const end = huffmanEncode(Buffer.from('www.example.com'), out, 0);
    expect(out.subarray(0, end).toString('hex')).toBe('f1e3c2e5f23a6ba0ab90f4ff');
    expect(decodeHuffman(hex('f1e3c2e5f23a6ba0ab90f4ff'))).toBe('www.example.com');
    expect(decodeHuffman(hex('aec3771a4b'))).toBe('private');
  });

  it('refuses EOS inside a string and padding that is long or not all ones', () => {
    expect(decodeHuffman(hex('ffffffff'))).toBeNull(); // EOS (30 ones) then more
    expect(decodeHuffman(hex('00'))).toBeNull(); // '0' (00000) then padding 000: not all ones
    expect(decodeHuffman(hex('07'))).toBe('0'); // '0' (00000) then padding 111
    expect(decodeHuffman(hex('07ff'))).toBeNull(); // padding of 11 bits
  });

  it('round-trips any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const encoded = Buffer.alloc(huffmanLength(bytes));
        expect(huffmanEncode(bytes, encoded, 0)).toBe(encoded.length);
        expect(decodeHuffman(encoded)).toBe(Buffer.from(bytes).toString('latin1'));
      }),
      { seed: 0x4b_f1, numRuns: 300 },
    );
  });
});

describe('HpackDecoder', () => {
  it('decodes the RFC 7541 C.4 requests and keeps the dynamic table as the RFC shows', () => {
    const decoder = new HpackDecoder();
    expect(decoder.decode(hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff'), 0, 17)).toBe(true);
    expect(decoder.tableEntries()).toEqual([[':authority', 'www.example.com']]);
    const second = hex('8286 84be 5886 a8eb 1064 9cbf');
    expect(decoder.decode(second, 0, second.length)).toBe(true);
    expect(decoder.tableEntries()).toEqual([
      ['cache-control', 'no-cache'],
      [':authority', 'www.example.com'],
    ]);
  });

  it('decodes the RFC 7541 C.6 responses with evictions in a 256-byte table', () => {
    const decoder = new HpackDecoder(256);
    const first = hex(
      '4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3',
    );
    expect(decoder.decode(first, 0, first.length)).toBe(true);
    expect(decoder.status).toBe(302);
    expect(decoder.tableEntries()).toEqual([
      ['location', 'https://www.example.com'],
      ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'],
      ['cache-control', 'private'],
      [':status', '302'],
    ]);
    const second = hex('4883 640e ff c1 c0 bf');
    expect(decoder.decode(second, 0, second.length)).toBe(true);
    expect(decoder.status).toBe(307);
    expect(decoder.tableEntries()[0]).toEqual([':status', '307']);
    expect(decoder.tableEntries()).toHaveLength(4);
  });

  it('answers a repeated block from its cache with the same table effects', () => {
    const cached = new HpackDecoder();
    const fresh = new HpackDecoder();
    // nginx's head: :status 200, then literals with incremental indexing it never refers to.
    const block = hex(
      '887689aa6355e580ae212e1f6196dd6d5f4a01c52f948a080271400ae09bb8c854c5a37f5f87497ca58ae819aa5c0136',
    );
    for (let i = 0; i < 5; i++) {
      expect(cached.decode(block, 0, block.length)).toBe(true);
      expect(cached.status).toBe(200);
    }
    for (let i = 0; i < 5; i++) fresh.decode(Buffer.from(block), 0, block.length);
    expect(cached.tableEntries()).toEqual(fresh.tableEntries());
    expect(cached.tableEntries()[0]).toEqual(['content-length', '6']);
  });

  it('fails on an index past the table, a truncated string and a header list over the limit', () => {
    const decoder = new HpackDecoder(4096, 100);
    expect(decoder.decode(hex('be'), 0, 1)).toBe(false);
    expect(decoder.error).toBe(HPACK_ERROR_INVALID);
    expect(decoder.decode(hex('4088'), 0, 2)).toBe(false);
    expect(decoder.error).toBe(HPACK_ERROR_INVALID);
    // A literal with a new name "x" and a 127-byte value: 1 + 127 + 32 bytes, over 100.
    const block = Buffer.concat([hex('0001 78 7f00'), Buffer.alloc(127, 0x78)]);
    expect(decoder.decode(block, 0, block.length)).toBe(false);
    expect(decoder.error).toBe(HPACK_ERROR_TOO_LARGE);
  });

  it('never throws on any bytes: it decodes or reports an error', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 6 }), (blocks) => {
        const decoder = new HpackDecoder(4096, 4096);
        for (const block of blocks) {
          const ok = decoder.decode(block, 0, block.length);
          if (!ok) expect(decoder.error).not.toBe(0);
          if (!ok) break;
        }
      }),
      { seed: 0x4d_ec, numRuns: 2000 },
    );
  });
});

describe('HpackEncoder', () => {
  const fields = [
    [':method', 'GET'],
    [':scheme', 'http'],
    [':authority', '127.0.0.1:8080'],
    [':path', '/api/items?page=2'],
    ['authorization', 'Bearer abc.def'],
    ['x-trace', 'on'],
  ] as const;

  it('indexes a request once; a repeat is one byte per field', () => {
    const encoder = new HpackEncoder();
    const first = encoder.encode(fields);
    const repeat = encoder.encode(fields);
    expect(repeat.length).toBe(fields.length);
    expect(first.length).toBeGreaterThan(repeat.length * 4);
    const decoder = new HpackDecoder();
    expect(decoder.decode(first, 0, first.length)).toBe(true);
    expect(decoder.decode(repeat, 0, repeat.length)).toBe(true);
    expect(decoder.tableEntries().reverse()).toEqual(fields.slice(2).map(([n, v]) => [n, v]));
  });

  it('round-trips generated header lists into the table a decoder builds, within the table size', () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
    const value = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 200,
    });
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.tuple(name, value), { maxLength: 8 }), { minLength: 1, maxLength: 4 }),
        (lists) => {
          const encoder = new HpackEncoder();
          const decoder = new HpackDecoder();
          const expected = new Map<string, [string, string]>();
          let size = 0;
          for (const list of [...lists, ...lists]) {
            const block = encoder.encode(list);
            expect(decoder.decode(block, 0, block.length)).toBe(true);
            for (const [n, v] of list) {
              const key = `${n}\0${v}`;
              if (!expected.has(key) && size + n.length + v.length + 32 <= 4096) {
                expected.set(key, [n, v]);
                size += n.length + v.length + 32;
              }
            }
          }
          expect(decoder.tableEntries().reverse()).toEqual([...expected.values()]);
        },
      ),
      { seed: 0x3e_c0, numRuns: 300 },
    );
  });
});
