// Types of stores.mjs (imported by packages/compare's tests).
export interface StartedStore {
  host: string;
  port: number;
  url: string;
  stop(): Promise<void>;
}
export interface StartedPostgres extends StartedStore {
  user: string;
  database: string;
  socketDir: string;
}
export function freePort(): Promise<number>;
export function postgresBin(): string | undefined;
export function redisBin(): string | undefined;
export function postgresMissing(): string | undefined;
export function redisMissing(): string | undefined;
export function startPostgres(): Promise<StartedPostgres>;
export function startRedis(): Promise<StartedStore>;
