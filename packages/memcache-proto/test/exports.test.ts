import { describe, expect, it } from 'vitest';

describe('the built package through its exports map', () => {
  it('exposes the server, the client-side encoder and parser, and the error class by name', async () => {
    const mod = await import('@hotpath/memcache-proto');
    // the built server and client talk to each other
    const server = mod.createServer({ port: 0 });
    await server.listen();
    const client = mod.createClient({ servers: [`127.0.0.1:${server.port}`] });
    try {
      expect(await client.set('built', 'works', { flags: 4 })).toBe(true);
      expect(await client.get('built')).toEqual({ key: 'built', flags: 4, value: Buffer.from('works') });
    } finally {
      client.close();
      await server.close();
    }
    expect(new mod.LruStore(1024).limitBytes).toBe(1024);
    expect(mod.encodeGet('k').toString()).toBe('get k\r\n');
    expect(mod.encodeSet('k', Buffer.from('v')).toString()).toBe('set k 0 0 1\r\nv\r\n');
    expect(new mod.TextReplyParser().push(Buffer.from('STORED\r\n'))).toEqual([
      { type: 'status', status: 'STORED' },
    ]);
    const error = new mod.HotpathMcError('HP_MC_TIMEOUT');
    expect(error.code).toBe('HP_MC_TIMEOUT');
    expect(error).toBeInstanceOf(Error);
  });
});
