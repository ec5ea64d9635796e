// The connections: PostgreSQL through node-postgres (PG_URL, else the PG* variables node-postgres
// reads: PGHOST, PGPORT, PGUSER, PGDATABASE) and Redis through ioredis (REDIS_URL).
import { Redis } from 'ioredis';
import pg from 'pg';

export function connect() {
  const pool = new pg.Pool({
    ...(process.env.PG_URL ? { connectionString: process.env.PG_URL } : {}),
    max: Number(process.env.PG_POOL ?? 10),
  });
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  return { pool, redis };
}
