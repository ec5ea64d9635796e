import { HotpathCompareError } from '../errors.js';

/** Throws HP_COMPARE_ABORTED when `signal` has fired. */
export function throwIfAborted(signal: AbortSignal | undefined, what = 'the comparison'): void {
  if (signal?.aborted) throw abortError(signal, what);
}

export function abortError(signal: AbortSignal, what = 'the comparison'): HotpathCompareError {
  const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? 'aborted');
  return new HotpathCompareError('HP_COMPARE_ABORTED', `${what} was aborted (${reason})`, {
    cause: signal.reason,
  });
}

/**
 * Settles with `promise`, or rejects with HP_COMPARE_ABORTED as soon as `signal` fires (the
 * caller's finally blocks then stop what the promise was waiting for).
 */
export function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  what?: string,
): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal, what));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal, what));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
