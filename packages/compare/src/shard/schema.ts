import { z } from 'zod';
import { capacitySchema, count, finite, loadSchema, monitorSchema, text } from '../round-data.js';

export { loadSchema, monitorSchema };

// The results of a measuring job come from a job that ran pull-request code: in the report job
// they are untrusted data. Every field is checked here, text and arrays are bounded, and nothing
// in them decides where the report goes (the pull request is found from the event, never here).

const sideInfo = z.object({
  command: text(),
  cwd: text(4000),
  ref: text(500).optional(),
  sha: z
    .string()
    .regex(/^[0-9a-f]{4,64}$/)
    .optional(),
});

const scenarioRound = z.object({
  scenario: text(80),
  load: loadSchema,
  /** Path of the profile file, relative to the shard's folder. */
  profile: z
    .string()
    .regex(/^profiles\/[\w.-]+\.json$/)
    .optional(),
  /** Path of the allocation profile file, relative to the shard's folder. */
  allocationProfile: z
    .string()
    .regex(/^profiles\/[\w.-]+\.json$/)
    .optional(),
  /** Path of the survivors profile (an allocation profile), relative to the shard's folder. */
  survivorsProfile: z
    .string()
    .regex(/^profiles\/[\w.-]+\.json$/)
    .optional(),
  /** Requests of the warm-up (the survivors' bytes are per warm-up request). */
  warmupRequests: count.optional(),
  monitors: z.array(monitorSchema).max(1000),
  profilers: z.array(text(100)).max(1000),
  otherLoad: z.number().finite().nonnegative().max(100_000).optional(),
  sliceSeconds: finite.positive().max(86_400).optional(),
  capacity: capacitySchema.optional(),
  /** Requests between the window's opening collection and its start (retained bytes count them). */
  settleRequests: count.optional(),
});

const stopSchema = z.object({
  rounds: z.enum(['fixed', 'auto']),
  reason: z.enum(['fixed', 'conclusive', 'max-time', 'max-rounds']),
  looks: z
    .array(z.object({ pairs: count, alphaShare: z.number().finite().min(0).max(1) }))
    .max(10_000)
    .refine(
      (looks) => looks.reduce((s, l) => s + l.alphaShare, 0) <= 1 + 1e-9,
      'the looks spend more than alpha',
    ),
});

const round = z.object({
  side: z.enum(['base', 'head']),
  round: count,
  scenarios: z.array(scenarioRound).max(100),
  pids: z.array(count).max(1000),
  serverNode: text(100).optional(),
  warnings: z.array(text()).max(1000),
});

export const resultsSchema = z.object({
  schema: z.literal('hotpath-results/1'),
  shard: z.object({ index: count, total: count }),
  sides: z.object({ base: sideInfo, head: sideInfo }),
  /** The settings the measuring job ran with (scenarios, rounds, windows). */
  settings: z.record(z.string(), z.unknown()),
  environment: z.object({
    node: text(100),
    platform: text(100),
    cpus: count,
    cpuModel: text(300),
    name: text(200).optional(),
  }),
  warnings: z.array(text()).max(1000),
  order: z.array(z.enum(['base', 'head'])).max(10_000),
  scenarios: z.array(text(80)).min(1).max(100),
  startedAt: text(40),
  finishedAt: text(40),
  stop: stopSchema.optional(),
  /** connections: auto — the count chosen per scenario and the steps that chose it. */
  loadLevels: z
    .array(
      z.object({
        scenario: text(80),
        connections: z.number().int().min(1).max(10_000),
        reason: z.enum(['plateau', 'fixed-rate']),
        steps: z.array(z.object({ connections: count, requestsPerSecond: finite })).max(20),
        headSteps: z
          .array(z.object({ connections: count, requestsPerSecond: finite }))
          .max(20)
          .optional(),
      }),
    )
    .max(100)
    .optional(),
  /** rate: "N%" — base's capacity measured before the rounds and the rate it made. */
  rateLevels: z
    .array(
      z.object({
        scenario: text(80),
        share: z.number().positive().max(1000),
        capacity: z.number().nonnegative().finite(),
        rate: z.number().positive().finite(),
        steps: z.array(z.object({ connections: count, requestsPerSecond: finite })).max(20),
        openSteps: z
          .array(z.object({ rate: z.number().positive().finite(), requestsPerSecond: finite }))
          .max(20)
          .optional(),
      }),
    )
    .max(100)
    .optional(),
  /** The CPUs of the servers and of the load generator, when placed. */
  placement: z
    .object({
      server: z.array(count).min(1).max(4096),
      load: z.array(count).min(1).max(4096),
      widened: z
        .object({
          side: z.enum(['base', 'head']),
          share: z.number().min(0).max(1),
          from: z.array(count).min(1).max(4096),
          at: z.literal('load-level').optional(),
        })
        .optional(),
    })
    .optional(),
  base: z.array(round).max(1000),
  head: z.array(round).max(1000),
});

export type ResultsFile = z.infer<typeof resultsSchema>;

const functionEntry = z.object({
  name: text(2000),
  file: text(4000),
  line: count,
  column: count,
  kind: z.enum(['js', 'cpp', 'shared', 'gc', 'builtin', 'regexp', 'meta', 'unknown']).catch('unknown'),
  self: count,
  total: count,
  tiers: z.array(text(40)).max(20).optional(),
});

export const profileSchema = z
  .object({
    source: z.enum(['cpuprofile', 'tick-log']),
    totalTicks: count,
    functions: z.array(functionEntry).max(1_000_000),
    stacks: z.array(z.object({ frames: z.array(count).max(10_000), count })).max(5_000_000),
    warnings: z.array(text()).max(10_000),
  })
  .refine(
    (p) => p.stacks.every((s) => s.frames.every((f) => f < p.functions.length)),
    'a stack names a function that is not there',
  );

const bytes = finite.nonnegative();

/** A window's sampled allocation profile (model.ts AllocationProfile). */
export const allocationProfileSchema = z
  .object({
    samplingInterval: bytes,
    sampledBytes: bytes,
    functions: z
      .array(z.object({ name: text(2000), file: text(4000), line: count, column: count, selfBytes: bytes }))
      .max(1_000_000),
    stacks: z.array(z.object({ frames: z.array(count).min(1).max(10_000), bytes })).max(5_000_000),
  })
  .refine(
    (p) => p.stacks.every((s) => s.frames.every((f) => f < p.functions.length)),
    'a stack names a function that is not there',
  )
  .refine(
    (p) =>
      Math.abs(p.functions.reduce((sum, f) => sum + f.selfBytes, 0) - p.sampledBytes) <=
      1e-6 * Math.max(1, p.sampledBytes),
    "the sampled bytes are not the sum of the functions' bytes",
  );
