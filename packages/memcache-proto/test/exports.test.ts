import { describe, expect, it } from 'vitest';

describe('the built package through its exports map', () => {
  it('exposes the server, the store and the error class by name', async () => {
    const mod = await import('@hotpath/memcache-proto');
    expect(typeof mod.createServer).toBe('function');
    expect(new mod.LruStore(1024).limitBytes).toBe(1024);
    const error = new mod.HotpathMcError('HP_MC_TIMEOUT');
    expect(error.code).toBe('HP_MC_TIMEOUT');
    expect(error).toBeInstanceOf(Error);
  });
});
