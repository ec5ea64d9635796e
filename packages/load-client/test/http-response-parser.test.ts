import { describe, expect, it } from 'vitest';
import { HttpResponseParser } from '../src/http-response-parser.js';

function collect(chunks: Buffer[], noBody = false) {
  const responses: { status: number; close: boolean }[] = [];
  const errors: string[] = [];
  const parser = new HttpResponseParser({
    onResponse: (status, close) => {
      responses.push({ status, close });
      parser.noBody = noBody;
    },
    onParseError: (reason) => errors.push(reason),
  });
  parser.reset();
  parser.noBody = noBody;
  for (const chunk of chunks) parser.execute(chunk, chunk.length);
  return { responses, errors, parser };
}

/** Every way of cutting the stream in two, plus byte by byte. */
function splits(text: string): Buffer[][] {
  const all = Buffer.from(text, 'latin1');
  const out: Buffer[][] = [[all], [...all].map((b) => Buffer.from([b]))];
  for (let i = 1; i < all.length; i++) out.push([all.subarray(0, i), all.subarray(i)]);
  return out;
}

const stream =
  'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Long: ' +
  'y'.repeat(50) +
  '\r\n\r\nhello' +
  'HTTP/1.1 404 Not Found\r\ntransfer-encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nTrailer: t\r\n\r\n' +
  'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n' +
  'HTTP/1.1 503 Busy\r\nCONTENT-LENGTH: 2\r\nConnection: close\r\n\r\nno';

describe('HttpResponseParser', () => {
  it('reads only the bytes of this read from a reused buffer (regression: fast-check seed 0x280a11)', () => {
    // Socket `onread` reuses one buffer: past this read's length lie an earlier read's bytes,
    // here a line feed the parser once took for the end of the status line.
    const buffer = Buffer.alloc(64, 0x20);
    buffer.write('\n\n', 40, 'latin1');
    const { responses, errors, parser } = collect([]);
    const reads = ['HTTP/1.1 200 OK\r\ncontent-le', 'ngth: 0\n\n'];
    for (const text of reads) {
      const n = buffer.write(text, 0, 'latin1');
      parser.execute(buffer, n);
    }
    expect(errors).toEqual([]);
    expect(responses).toEqual([{ status: 200, close: false }]);
    // The first read held no line end of its own: the parser kept its bytes for the next.
    buffer.fill(0x0a);
    const second = collect([]);
    const n = buffer.write('HTTP/1.1 200', 0, 'latin1');
    second.parser.execute(buffer, n);
    expect(second.errors).toEqual([]);
    expect(second.parser.midResponse).toBe(true);
  });

  it('frames a repeated head like a freshly parsed one, and re-parses a head that differs', () => {
    // Same head length, different framing: a remembered head must never stand in for these.
    const five = 'HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 5\r\n\r\n';
    const six = 'HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 6\r\n\r\n';
    const closing = 'HTTP/1.1 200 OK\r\nServer: x\r\nConnection: close\r\n\r\n';
    const missing = 'HTTP/1.1 404 OK\r\nServer: x\r\nContent-Length: 5\r\n\r\n';
    const text = `${five}hello${five}hello${six}hello!${five}hello${missing}nope!${five}hello${closing}`;
    const expected = [200, 200, 200, 200, 404, 200, 200];
    for (const chunks of splits(text)) {
      const { responses, errors, parser } = collect(chunks);
      expect(errors).toEqual([]);
      expect(responses.map((r) => r.status)).toEqual(expected.slice(0, 6));
      expect(responses.every((r) => !r.close)).toBe(true);
      // The last one has no length: its body runs until the server closes.
      expect(parser.finishOnClose()).toBe(true);
      expect(responses).toHaveLength(7);
      expect(responses[6]).toEqual({ status: 200, close: true });
    }
    // A repeated head after HEAD has no body, as a parsed one.
    const head = collect([Buffer.from(`${five}${five}${five}`, 'latin1')], true);
    expect(head.responses).toHaveLength(3);
    expect(head.errors).toEqual([]);
  });

  it('reads Content-Length, chunked, 1xx and 204 responses however the bytes are split', () => {
    for (const chunks of splits(stream)) {
      const { responses, errors } = collect(chunks);
      expect(errors).toEqual([]);
      expect(responses).toEqual([
        { status: 200, close: false },
        { status: 404, close: false },
        { status: 204, close: false },
        { status: 503, close: true },
      ]);
    }
  });

  it('finishes a close-delimited body only when the server closes', () => {
    const { responses, parser } = collect([Buffer.from('HTTP/1.1 200 OK\r\n\r\nsome body')]);
    expect(responses).toEqual([]);
    expect(parser.midResponse).toBe(true);
    expect(parser.finishOnClose()).toBe(true);
    expect(responses).toEqual([{ status: 200, close: true }]);
  });

  it('treats HTTP/1.0 without keep-alive as closing', () => {
    const { responses } = collect([Buffer.from('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n')]);
    expect(responses).toEqual([{ status: 200, close: true }]);
  });

  it('expects no body after a HEAD request', () => {
    const { responses } = collect(
      [
        Buffer.from(
          'HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n',
        ),
      ],
      true,
    );
    expect(responses).toHaveLength(2);
  });

  it.each([
    ['not HTTP', 'SSH-2.0-OpenSSH_9\r\n'],
    ['a bad status', 'HTTP/1.1 2x0 OK\r\n\r\n'],
    ['a bad Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n'],
    ['conflicting Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n'],
    ['a bad chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
    ['a header without colon', 'HTTP/1.1 200 OK\r\nbroken\r\n\r\n'],
    ['a huge head', `HTTP/1.1 200 OK\r\nX: ${'a'.repeat(70_000)}`],
  ])('reports %s as a parse error', (_name, text) => {
    const { responses, errors } = collect([Buffer.from(text)]);
    expect(responses).toEqual([]);
    expect(errors).toHaveLength(1);
  });
});
