import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HttpResponseParser } from '../src/http-response-parser.js';

// Property-based tests of the HTTP/1.1 response parser: generated response streams, cut at
// generated points, must be framed exactly as a server framed them; any bytes at all must end in
// responses or one parse error, never an exception. Fixed seeds and bounded runs (a few seconds):
// a failure prints its seed and shrunk counterexample, which then becomes a regression test.
const SEED = 0x28_0a11;
const RUNS = 150;

interface Response {
  status: number;
  head: string;
  body: string;
}

const token = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/);
const headerValue = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,30}[\x21-\x7e])?$/);
const randomCase = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((upper) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
/** Extra headers that do not frame the body (not Content-Length, Transfer-Encoding, Connection). */
const extraHeaders = fc.array(
  fc
    .tuple(token, headerValue)
    .filter(([name]) => !/^(content-length|transfer-encoding|connection)$/i.test(name)),
  { maxLength: 4 },
);
const bodyBytes = fc.string({
  unit: fc.integer({ min: 0, max: 255 }).map((b) => String.fromCharCode(b)),
  maxLength: 300,
});

/** One response as a server may frame it: fixed length, chunked (extensions, trailers), or no body. */
const response: fc.Arbitrary<Response> = fc.oneof(
  fc
    .record({
      status: fc.constantFrom(200, 201, 301, 404, 500, 503),
      reason: fc.constantFrom('OK', 'X', '', 'Some Reason'),
      name: randomCase('content-length'),
      extra: extraHeaders,
      body: bodyBytes,
      crlf: fc.boolean(),
    })
    .map(({ status, reason, name, extra, body, crlf }) => {
      const nl = crlf ? '\r\n' : '\n';
      const headers = [...extra.map(([n, v]) => `${n}: ${v}`), `${name}: ${body.length}`];
      return { status, head: `HTTP/1.1 ${status} ${reason}${nl}${headers.join(nl)}${nl}${nl}`, body };
    }),
  fc
    .record({
      status: fc.constantFrom(200, 404, 500),
      name: randomCase('transfer-encoding'),
      value: randomCase('chunked'),
      extra: extraHeaders,
      chunks: fc.array(
        fc.tuple(
          bodyBytes.filter((b) => b.length > 0),
          fc.boolean(),
          fc.boolean(),
        ),
        { maxLength: 4 },
      ),
      trailers: fc.array(fc.tuple(token, headerValue), { maxLength: 2 }),
    })
    .map(({ status, name, value, extra, chunks, trailers }) => {
      const headers = [...extra.map(([n, v]) => `${n}: ${v}`), `${name}: ${value}`];
      const body = chunks
        .map(([data, upper, ext]) => {
          const size = data.length.toString(16);
          return `${upper ? size.toUpperCase() : size}${ext ? ';ext=1' : ''}\r\n${data}\r\n`;
        })
        .join('');
      const trailer = trailers.map(([n, v]) => `${n}: ${v}\r\n`).join('');
      return {
        status,
        head: `HTTP/1.1 ${status} OK\r\n${headers.join('\r\n')}\r\n\r\n`,
        body: `${body}0\r\n${trailer}\r\n`,
      };
    }),
  fc.record({ status: fc.constantFrom(204, 304), extra: extraHeaders }).map(({ status, extra }) => ({
    status,
    head: `HTTP/1.1 ${status} X\r\n${extra.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`,
    body: '',
  })),
  // An interim 100 Continue before the real response: not reported.
  fc.constant({ status: 100, head: 'HTTP/1.1 100 Continue\r\n\r\n', body: '' }),
);

/** Cuts `bytes` at the given points (any order, duplicates and out-of-range ones ignored). */
function cut(bytes: Buffer, points: number[]): Buffer[] {
  const at = [...new Set(points.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of at) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  out.push(bytes.subarray(from));
  return out;
}

function parse(chunks: Buffer[]) {
  const statuses: number[] = [];
  const errors: string[] = [];
  const parser = new HttpResponseParser({
    onResponse: (status) => statuses.push(status),
    onParseError: (reason) => errors.push(reason),
  });
  parser.reset();
  for (const chunk of chunks) {
    // The parser may only read `length` bytes of a reused, larger buffer.
    const padded = Buffer.concat([chunk, Buffer.from('HTTP/1.1 999 garbage\r\n')]);
    parser.execute(padded, chunk.length);
  }
  return { statuses, errors, parser };
}

describe('HttpResponseParser properties (fast-check, fixed seed)', () => {
  it('frames any stream of well-formed responses, cut anywhere, as the server framed it', () => {
    fc.assert(
      fc.property(
        fc.array(response, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (list, points) => {
          const bytes = Buffer.from(list.map((r) => r.head + r.body).join(''), 'latin1');
          const { statuses, errors, parser } = parse(cut(bytes, points));
          expect(errors).toEqual([]);
          expect(statuses).toEqual(list.filter((r) => r.status !== 100).map((r) => r.status));
          expect(parser.midResponse).toBe(false);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('gives the same answer for the same bytes however they are cut', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            response.map((r) => r.head + r.body),
            bodyBytes,
          ),
          { maxLength: 6 },
        ),
        fc.array(fc.nat(), { maxLength: 12 }),
        (parts, points) => {
          const bytes = Buffer.from(parts.join(''), 'latin1');
          const whole = parse([bytes]);
          const pieces = parse(cut(bytes, points));
          expect(pieces.statuses).toEqual(whole.statuses);
          expect(pieces.errors).toEqual(whole.errors);
        },
      ),
      { seed: SEED + 1, numRuns: RUNS },
    );
  });

  it('never throws on any bytes: responses, then at most one parse error and nothing after it', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 10 }), (chunks) => {
        const events: string[] = [];
        const parser = new HttpResponseParser({
          onResponse: (status) => events.push(`response ${status}`),
          onParseError: (reason) => events.push(`error ${reason}`),
        });
        parser.reset();
        for (const c of chunks) parser.execute(Buffer.from(c), c.length);
        parser.finishOnClose();
        const firstError = events.findIndex((e) => e.startsWith('error'));
        if (firstError >= 0) expect(events.slice(firstError + 1)).toEqual([]);
        for (const e of events)
          if (e.startsWith('response')) expect(Number(e.slice(9))).toBeGreaterThanOrEqual(200);
      }),
      { seed: SEED + 2, numRuns: RUNS * 2 },
    );
  });
});
