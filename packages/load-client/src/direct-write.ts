/**
 * Writes a request Buffer straight to a TCP socket's libuv handle, past the Writable stream
 * (Socket.write → Writable bookkeeping → a write request object → handle.writeBuffer → a
 * deferred callback, about 3 % of the client's busy time against nginx). It uses the same
 * handle method and write-request class node's own stream code uses, taken from the
 * `stream_wrap` binding; when any of them is missing (another Node version, a runtime without
 * `process.binding`), `directWriter` returns null and the connection writes through the stream.
 *
 * Only for a socket whose Writable is never used after connect (nothing may be buffered there
 * that a direct write could overtake): the connection uses it with one request in flight.
 */

/** The parts of node's TCP handle a direct write uses. */
interface StreamHandle {
  writeBuffer(req: object, data: Uint8Array): number;
}

interface WriteRequest {
  handle: StreamHandle;
  oncomplete: (this: WriteRequest, status: number) => void;
  async: boolean;
  bytes: number;
  buffer: Uint8Array | null;
  onError: ((code: number) => void) | null;
}

interface StreamWrapBinding {
  WriteWrap: new () => WriteRequest;
  streamBaseState: Int32Array;
  kLastWriteWasAsync: number;
}

function loadBinding(): StreamWrapBinding | null {
  try {
    const binding = (
      process as unknown as { binding?: (name: string) => Partial<StreamWrapBinding> }
    ).binding?.('stream_wrap');
    if (
      binding !== undefined &&
      typeof binding.WriteWrap === 'function' &&
      binding.streamBaseState instanceof Int32Array &&
      typeof binding.kLastWriteWasAsync === 'number'
    ) {
      return binding as StreamWrapBinding;
    }
  } catch {
    // no process.binding, or the binding is not allowed: write through the stream
  }
  return null;
}

let binding: StreamWrapBinding | null | undefined;

/** libuv's "bad file descriptor": what a write on a closed handle reports here. */
const UV_EBADF = -9;

function onComplete(this: WriteRequest, status: number): void {
  this.buffer = null;
  if (status < 0 && this.onError !== null) this.onError(status);
}

/** Whether the last direct write was queued in libuv (it then keeps its bytes until done). */
export function lastDirectWriteQueued(): boolean {
  const b = binding;
  return b !== null && b !== undefined && b.streamBaseState[b.kLastWriteWasAsync] !== 0;
}

/**
 * A function that writes one Buffer on `socket`'s handle and returns 0, or a negative libuv
 * error code (nothing was written); errors of a write that completes later go to `onError`.
 * Null when direct writes are unavailable for this socket (then use `socket.write`).
 */
export function directWriter(
  socket: object,
  onError: (code: number) => void,
): ((data: Uint8Array) => number) | null {
  if (binding === undefined) binding = loadBinding();
  const b = binding;
  const handle = (socket as { _handle?: Partial<StreamHandle> | null })._handle;
  if (b === null || handle == null || typeof handle.writeBuffer !== 'function') return null;
  const streamHandle = handle as StreamHandle;
  const state = b.streamBaseState;
  const asyncSlot = b.kLastWriteWasAsync;
  const WriteWrap = b.WriteWrap;
  return (data) => {
    const req = new WriteWrap();
    req.handle = streamHandle;
    req.oncomplete = onComplete;
    req.async = false;
    req.bytes = data.length;
    req.buffer = null;
    req.onError = null;
    const err = streamHandle.writeBuffer(req, data);
    // a closed handle answers undefined rather than an error code
    if (typeof err !== 'number') return UV_EBADF;
    if (err === 0 && state[asyncSlot] !== 0) {
      // queued in libuv: keep the bytes alive until it completes
      req.async = true;
      req.buffer = data;
      req.onError = onError;
    }
    return err;
  };
}
