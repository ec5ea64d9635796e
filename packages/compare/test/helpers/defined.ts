import { expect } from 'vitest';

/** The value, after asserting that it is there (a failed lookup fails the test, not a later line). */
export function defined<T>(value: T | null | undefined): T {
  expect(value).toBeDefined();
  expect(value).not.toBeNull();
  return value as T;
}
