import type { HistoryPoint } from '../../src/drift/history.js';

export const sha = (n: number) => n.toString(16).padStart(40, 'a');
export const v140 = { ref: 'v1.4.0', sha: sha(1) };

export function point(n: number, change = 0.01, id = `p${n}`): HistoryPoint {
  return {
    id,
    commit: sha(100 + n),
    date: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
    threshold: 5,
    scenarios: [
      {
        name: 'default',
        metrics: [
          {
            metric: 'cpuPerRequest',
            better: 'lower',
            change,
            ci: [change - 0.03, change + 0.03],
            se: 0.0075,
            pairs: 6,
            inVerdict: true,
          },
        ],
        functions: [],
      },
    ],
  };
}
