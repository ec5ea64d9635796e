import { parentPort, workerData } from 'node:worker_threads';
import { HotpathLoadError } from './errors.js';
import { LoadEngine, type Tick } from './load-engine.js';
import { type RunOptions, resolveOptions } from './options.js';
import { protocolFor } from './protocol.js';
import { toPartial } from './result.js';
import type { WorkerMessage } from './worker-pool.js';

/** One worker thread: runs its share of the load and posts ticks and its partial result. */
async function main(): Promise<void> {
  const port = parentPort;
  if (port === null) return;
  const post = (message: WorkerMessage) => port.postMessage(message);
  try {
    const options = resolveOptions({ ...(workerData as RunOptions), workers: 1 });
    const engine = new LoadEngine(options, protocolFor(options));
    engine.on('tick', (tick: Tick) => post({ type: 'tick', tick }));
    engine.on('warmup', (tick: Tick) => post({ type: 'warmup', tick }));
    port.on('message', (message: { type: string }) => {
      if (message.type === 'stop') engine.stop();
    });
    const outcome = await engine.start();
    post({ type: 'result', partial: toPartial(outcome) });
  } catch (error) {
    post({
      type: 'error',
      code: error instanceof HotpathLoadError ? error.code : 'HP_LOAD_WORKER_FAILED',
      message: error instanceof Error ? error.message : String(error),
    });
  } finally {
    port.close();
  }
}

void main();
