import type { Profile } from '../../src/index.js';
import { parseCpuProfile } from '../../src/index.js';

const frame = (functionName: string, url: string, lineNumber: number) => ({
  functionName,
  url,
  lineNumber,
  columnNumber: 0,
});

/** root → handler → (hash | render | extra); sample counts per leaf given. */
export function profileOf(hash: number, render: number, hashLine = 10, extra?: [string, number]): Profile {
  const nodes = [
    { id: 1, callFrame: frame('(root)', '', -1), children: [2] },
    { id: 2, callFrame: frame('handler', '/srv/app.js', 1), children: [3, 4, 5] },
    { id: 3, callFrame: frame('hash', '/srv/auth.js', hashLine) },
    { id: 4, callFrame: frame('render', '/srv/view.js', 3) },
    { id: 5, callFrame: frame(extra?.[0] ?? 'unused', '/srv/extra.js', 7) },
  ];
  const samples = [...Array(hash).fill(3), ...Array(render).fill(4), ...Array(extra?.[1] ?? 0).fill(5)];
  return parseCpuProfile({ startTime: 0, endTime: 1, nodes, samples });
}
