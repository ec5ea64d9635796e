/**
 * Makes this package's error class from its catalogue of codes, in the manner of fastify's
 * createError: `code` is one of the catalogue's keys, the message is the one given or else the
 * code's default message from the catalogue, and `cause` is kept when there is one. The class
 * gets `name` as its instances' name; `instanceof` works for it and for Error.
 * (A small copy in every package, so that no package depends on another for its errors.)
 */
export function createErrorClass<Code extends string>(
  name: string,
  catalogue: Readonly<Record<Code, string>>,
): CodedErrorClass<Code> {
  return class extends Error {
    readonly code: Code;

    constructor(code: Code, message?: string, options?: { cause?: unknown }) {
      super(message ?? catalogue[code], options?.cause === undefined ? undefined : { cause: options.cause });
      this.name = name;
      this.code = code;
    }
  };
}

/** An error with a stable code from its package's catalogue. */
export interface CodedError<Code extends string> extends Error {
  readonly code: Code;
}

/** The class createErrorClass makes: `new (code, message?, { cause }?)`. */
export interface CodedErrorClass<Code extends string> {
  new (code: Code, message?: string, options?: { cause?: unknown }): CodedError<Code>;
}
