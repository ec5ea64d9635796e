// A drift writer in its own process, through the built package (the store test kills it at some
// moment): appends points k0, k1, … to the history branch of the clone in argv[2], printing each
// id once it is pushed.
import { appendToHistoryBranch } from '../../dist/internal.js';

const repo = process.argv[2] ?? '';
const reference = { ref: 'v1.4.0', sha: '1'.padStart(40, 'a') };
for (let i = 0; i < 1000; i++) {
  await appendToHistoryBranch({ repo, attempts: 10 }, reference, {
    id: `k${i}`,
    commit: (500 + i).toString(16).padStart(40, 'a'),
    date: new Date(Date.UTC(2026, 1, 1, 0, 0, i)).toISOString(),
    threshold: 5,
    scenarios: [],
  });
  process.stdout.write(`k${i}\n`);
}
