import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { functionLabel, HotpathTicksError, type Profile, parseTickLog, toFolded } from '../src/index.js';
import { defined } from './helpers/defined.js';

const dir = mkdtempSync(join(tmpdir(), 'hotpath-ticklog-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LOG = [
  'v8-version,11,3,244,8,-node.38,0',
  'shared-library,/nonexistent/libfake.so,0x10000,0x20000,0',
  // Old style: quoted name with a comma inside.
  'code-creation,JS,10,100,0x100000,0x100,"quoted, name /app/x.js:3:5",0x900000,*',
  // New style: comma escaped as \\x2C.
  'code-creation,JS,10,101,0x200000,256,handler\\x2Cwith /app/y.js:10:2,0x900100,~',
  'code-creation,JS,10,102,0x210000,256,handler\\x2Cwith /app/y.js:10:2,0x900100,^',
  'code-creation,Builtin,2,50,0x300000,64,ArrayPrototypePush',
  // Very old: no timestamp before the address.
  'code-creation,LazyCompile,0,0x500000,32,"old /app/z.js:1",0x900200,~',
  'code-source-info,0x100000,1,0,10,C0O0,,',
  'tick,0x100010,1000,0,0x0,0,0x200010',
  'tick,0x100020,1001,0,0x0,0,+100000', // relative frame: 0x100020 + 0x100000 = handler
  'tick,0x300010,1002,0,0x0,1,0x100010,0x200010', // builtin on top, GC state
  'tick,0x15000,1003,0,0x0,6', // inside the library, symbols not read
  'tick,0x999999,1004,0,0x0,0', // nothing there
  'tick,0x210010,1005,0,0x0,0,0x500004', // baseline tier of handler, called by old
  'code-move,0x100000,0x400000',
  'tick,0x400010,1006,0,0x0,0', // moved code
  'tick,0x100010,1007,0,0x0,0', // the old address is empty now
  'code-delete,0x200000',
  'tick,0x200010,1008,0,0x0,0,overflow', // deleted; overflow marker dropped
  'sfi-move,0x900000,0x900800',
  'some-new-kind,1,2,3',
  'some-new-kind,4',
  'tick,0x40', // truncated: no newline at the end
].join('\n');

function byLabel(profile: Profile): Record<string, number> {
  return Object.fromEntries(profile.functions.map((f) => [functionLabel(f), f.self]));
}

describe('parseTickLog on a hand-written log', () => {
  it('follows code events, CSV quoting and escapes, relative frames, and counts what it skipped', async () => {
    const file = join(dir, 'synthetic.log');
    writeFileSync(file, LOG);
    const profile = await parseTickLog(file, { resolveSymbols: false });
    expect(profile.source).toBe('tick-log');
    expect(profile.totalTicks).toBe(9);
    expect(byLabel(profile)).toEqual({
      'quoted, name /app/x.js:3:5': 3,
      '(unknown)': 3,
      'Builtin: ArrayPrototypePush': 1,
      '/nonexistent/libfake.so': 1,
      'handler,with /app/y.js:10:2': 1,
      'old /app/z.js:1': 0,
    });
    const handler = defined(
      profile.functions.find((f) => f.name === 'handler,with'),
      'handler,with',
    );
    expect(handler).toMatchObject({ file: '/app/y.js', line: 10, column: 2, kind: 'js', total: 4 });
    expect(handler.tiers).toEqual(['interpreted', 'sparkplug']);
    expect(profile.functions.find((f) => f.name === 'quoted, name')?.tiers).toEqual(['turbofan']);
    expect(profile.functions.find((f) => f.kind === 'shared')?.file).toBe('/nonexistent/libfake.so');
    expect(profile.meta).toMatchObject({
      v8Version: '11.3.244.8-node.38',
      gcTicks: 1,
      unaccountedTicks: 3,
      unknownLines: { 'some-new-kind': 2 },
    });
    expect(profile.warnings.join('\n')).toMatch(/incomplete line of 9 bytes/);
    expect(profile.warnings.join('\n')).toMatch(/unknown kinds skipped: some-new-kind \(2\)/);
    expect(profile.warnings.join('\n')).toMatch(/1 stack overflow markers/);
    // Stacks are root first.
    expect(toFolded(profile)).toContain('handler,with /app/y.js:10:2;quoted, name /app/x.js:3:5 2\n');
    expect(toFolded(profile)).toContain('old /app/z.js:1;handler,with /app/y.js:10:2 1\n');
  });

  it('reads a stream in arbitrary chunks the same way', async () => {
    const bytes = Buffer.from(`${LOG}\n`);
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 7) chunks.push(bytes.subarray(i, i + 7));
    const streamed = await parseTickLog(Readable.from(chunks), { resolveSymbols: false });
    // With the final newline the last tick line is complete (and is a bad line: too few fields).
    expect(streamed.totalTicks).toBe(9);
    expect(streamed.meta?.badLines).toBe(1);
    expect(streamed.warnings.some((w) => w.includes('incomplete'))).toBe(false);
  });

  it('reports a missing nm and an unreadable library as warnings, never fails', async () => {
    const log = [
      `shared-library,${process.execPath},0x400000,0x500000,0`,
      'shared-library,/no/such/lib.so,0x7f0000000000,0x7f0000100000,0',
      'tick,0x400100,1,0,0x0,6',
      'tick,0x7f0000000100,2,0,0x0,6',
      '',
    ].join('\n');
    const file = join(dir, 'tools.log');
    writeFileSync(file, log);
    const profile = await parseTickLog(file, { nm: '/nonexistent/bin/nm' });
    expect(profile.totalTicks).toBe(2);
    const warnings = profile.warnings.join('\n');
    expect(warnings).toContain('/nonexistent/bin/nm is not available');
    expect(warnings).toMatch(/cannot read \/no\/such\/lib\.so \(ENOENT\)/);
    expect(profile.functions.map((f) => f.kind)).toEqual(['shared', 'shared']);
  });

  it('never hands a library path that looks like an option to a tool', async () => {
    const log = ['shared-library,--plugin=/tmp/evil.so,0x10000,0x20000,0', 'tick,0x10010,1,0,0x0,6', ''].join(
      '\n',
    );
    const file = join(dir, 'hostile.log');
    writeFileSync(file, log);
    const profile = await parseTickLog(file);
    expect(profile.totalTicks).toBe(1);
    expect(profile.functions[0]).toMatchObject({ kind: 'shared', name: '--plugin=/tmp/evil.so' });
  });

  it('leaves bytecode handlers out of stacks as --prof-process does (a tick in one counts for the interpreted function)', async () => {
    const log = [
      'code-creation,BytecodeHandler,0,1,0x7f0000001000,0x100,Add',
      'code-creation,JS,9,2,0x13300000,0x40,interp /app/i.js:1:1,0x900000,~',
      'code-creation,JS,10,3,0x13400000,0x40,caller /app/i.js:9:1,0x900100,^',
      'tick,0x7f0000001010,10,0,0x0,0,0x13300008,0x13400010', // in Add, running interp
      'tick,0x7f0000001020,11,0,0x0,0,0x13300010', // likewise
      'tick,0x13300004,12,0,0x0,0,0x13400010', // in the function's own code
      'tick,0x7f0000001030,13,0,0x0,0', // a handler and nothing else: it stays the frame
      'tick,0x7f0000001040,14,0,0x0,0,0x7f0000001050,0x13400010', // handlers below are left out too
      // Inside the binary (Node 20, 22) --prof-process resolves a handler to the binary: it stays.
      'shared-library,/nonexistent/node,0x400000,0x500000,0',
      'code-creation,BytecodeHandler,0,1,0x401000,0x100,Mul',
      'tick,0x401010,15,0,0x0,0,0x13300008',
      // Code of `new Function` has a position but no script name.
      'code-creation,JS,9,2,0x13500000,0x40, :1:20,0x900200,~',
      'tick,0x7f0000001010,16,0,0x0,0,0x13500004',
      '',
    ].join('\n');
    const file = join(dir, 'handlers.log');
    writeFileSync(file, log);
    const profile = await parseTickLog(file, { resolveSymbols: false });
    expect(profile.totalTicks).toBe(7);
    expect(byLabel(profile)).toEqual({
      'interp /app/i.js:1:1': 3,
      'caller /app/i.js:9:1': 1,
      'BytecodeHandler: Add': 1,
      'BytecodeHandler: Mul': 1,
      '(anonymous) :1:20': 1,
    });
    expect(toFolded(profile)).toContain('caller /app/i.js:9:1;interp /app/i.js:1:1 2\n');
    expect(profile.meta?.unaccountedTicks).toBe(0);
  });

  it("names every tier marker V8 writes, context-specialised Maglev (+') and TurboFan (*') included", async () => {
    const markers = ['', '~', '^', '+', "+'", '*', "*'"];
    const log = [
      ...markers.map(
        (m, i) =>
          `code-creation,JS,10,${i},0x${(0x100000 + i * 0x1000).toString(16)},64,f /app/t.js:1:1,0x900000,${m}`,
      ),
      ...markers.map((_, i) => `tick,0x${(0x100010 + i * 0x1000).toString(16)},${i},0,0x0,0`),
      '',
    ].join('\n');
    const file = join(dir, 'tiers.log');
    writeFileSync(file, log);
    const profile = await parseTickLog(file, { resolveSymbols: false });
    expect(profile.functions).toHaveLength(1);
    expect(profile.functions[0]?.self).toBe(7);
    expect(profile.functions[0]?.tiers).toEqual([
      'compiled',
      'interpreted',
      'maglev',
      'maglev-context-specialised',
      'sparkplug',
      'turbofan',
      'turbofan-context-specialised',
    ]);
  });

  it('throws HP_TICKS_READ_FAILED for a file that cannot be read', async () => {
    const error = await parseTickLog(join(dir, 'missing.log')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HotpathTicksError);
    expect((error as HotpathTicksError).code).toBe('HP_TICKS_READ_FAILED');
    expect((error as Error).message).toMatch(/missing\.log \(ENOENT\)/);
  });
});
