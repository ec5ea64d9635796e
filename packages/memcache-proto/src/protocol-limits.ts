/**
 * Limits of the memcached protocol that both sides need (the client's encoders and the
 * server's parsers). A leaf module: it imports nothing, so client code never pulls in server code.
 */

/** memcached's longest key, in bytes. */
export const KEY_MAX_LENGTH = 250;
/** Longest text command line memcached buffers without a newline (get lines may be longer). */
export const LINE_MAX_BYTES = 2048;
/** Longest meta `O` (opaque) token, the letter included: memcached's 32. */
export const OPAQUE_TOKEN_MAX_BYTES = 32;
/**
 * Longest login a server reads before the client is authenticated: memcached's 16 KiB cap on the
 * text protocol's `user password` token (MAX_AUTH_REQ_LEN), also applied to binary SASL bodies.
 */
export const AUTH_TOKEN_MAX_BYTES = 16384;
/** Longest SASL mechanism name (the binary request's key): memcached's MAX_SASL_MECH_LEN. */
export const SASL_MECH_MAX_BYTES = 32;
