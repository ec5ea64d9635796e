import type { ConnectionOptions } from 'node:tls';

/**
 * The `onread` option for tls.connect: decrypted bytes land in one reused buffer, one call per
 * TLS record, without the Readable stream and its nextTick per record ('data' events took about a
 * tenth of the HTTP/2 client's CPU over TLS). tls.connect hands it on to net.Socket as it does in
 * Node 20.19 to 24, though its types do not list it. Callers keep a 'data' listener as well: it
 * never fires while `onread` is honoured, and reads on a runtime that ignores it.
 */
export function tlsOnread(
  buffer: Buffer,
  callback: (length: number, buffer: Buffer) => boolean,
): ConnectionOptions {
  return { onread: { buffer, callback } } as ConnectionOptions;
}
