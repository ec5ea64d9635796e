import { createHash } from 'node:crypto';
import { int32At, uint32At } from './checked-index.js';

/** A server as the ring knows it. */
export interface RingServer {
  host: string;
  port: number;
  weight?: number;
}

const POINTS_PER_HASH = 4;
const HASHES_PER_SERVER = 40;

function md5(text: string): Buffer {
  return createHash('md5').update(text, 'latin1').digest();
}

/**
 * A ketama consistent-hash ring compatible with libmemcached's ketama mode: each server gets
 * 160 points (times its relative weight) from md5 of "host:port-i" ("host-i" on port 11211),
 * four little-endian 32-bit points per digest; a key goes to the first point at or after the
 * first four bytes of md5(key), wrapping around.
 */
export class KetamaRing {
  private readonly points: Uint32Array;
  private readonly owners: Int32Array;

  constructor(servers: readonly RingServer[]) {
    const totalWeight = servers.reduce((sum, s) => sum + (s.weight ?? 1), 0);
    const entries: [number, number][] = [];
    const firstWeight = servers[0]?.weight ?? 1;
    servers.forEach((server, index) => {
      const share = (server.weight ?? 1) / totalWeight;
      const hashes = servers.every((s) => (s.weight ?? 1) === firstWeight)
        ? HASHES_PER_SERVER
        : Math.floor(share * HASHES_PER_SERVER * servers.length);
      const label = server.port === 11211 ? server.host : `${server.host}:${server.port}`;
      for (let i = 0; i < hashes; i++) {
        const digest = md5(`${label}-${i}`);
        for (let h = 0; h < POINTS_PER_HASH; h++) entries.push([digest.readUInt32LE(h * 4), index]);
      }
    });
    entries.sort((a, b) => a[0] - b[0]);
    this.points = Uint32Array.from(entries, (e) => e[0]);
    this.owners = Int32Array.from(entries, (e) => e[1]);
  }

  /** The ketama hash of a key: the first four bytes of its md5, little-endian. */
  static hash(key: string): number {
    return md5(key).readUInt32LE(0);
  }

  /** Index (into the servers given to the constructor) of the server owning the key. */
  serverFor(key: string): number {
    const points = this.points;
    if (points.length === 0) return -1;
    const hash = KetamaRing.hash(key);
    let lo = 0;
    let hi = points.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (uint32At(points, mid) < hash) lo = mid + 1;
      else hi = mid;
    }
    return int32At(this.owners, lo === points.length ? 0 : lo);
  }
}
