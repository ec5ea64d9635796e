import type { ProfileDiff } from './diff.js';

function pct(share: number): string {
  return `${(share * 100).toFixed(1)}%`.padStart(7);
}

/** A plain-text table of a ProfileDiff: base and head self share, change, status, function. */
export function renderDiffText(diff: ProfileDiff, baseName = 'base', headName = 'head'): string {
  const out = [
    `Self-time share per function: ${baseName} (${diff.baseTotal} ticks) → ${headName} (${diff.headTotal} ticks)`,
    '',
    '    base     head    delta  status    function',
  ];
  for (const f of diff.functions) {
    const delta = `${f.delta >= 0 ? '+' : '-'}${(Math.abs(f.delta) * 100).toFixed(1)}%`.padStart(8);
    const where = f.file ? ` ${f.file}${f.line > 0 ? `:${f.line}` : ''}` : '';
    out.push(
      `${pct(f.baseShare)}  ${pct(f.headShare)}  ${delta}  ${f.status.padEnd(8)}  ${f.name}${f.kind === 'cpp' || f.kind === 'shared' ? '' : where}`,
    );
  }
  return `${out.join('\n')}\n`;
}
