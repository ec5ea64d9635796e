// Rewrites the settings table of README.md from the settings table in the code (between the
// table's header and the next blank line). A test fails when the README lacks a setting.
import { readFileSync, writeFileSync } from 'node:fs';
import { flagOf, inputOf, SETTINGS } from '../dist/internal.js';

const HEADER = '| setting (config / API) | flag | Action input | default | meaning |';
const unitOf = (s) => {
  if (s.default === undefined || s.default === '') return '—';
  const d = Array.isArray(s.default) ? s.default.join(', ') : String(s.default);
  if (s.unit === 's') return `${d} s`;
  if (s.unit === '%') return `${d} %`;
  if (s.unit === 'points') return `${d} points`;
  if (s.unit === 'B/req') return `${d} B/request`;
  return `\`${d}\``;
};
const rows = SETTINGS.map((s) => {
  const flag = flagOf(s) ? `\`--${flagOf(s)}\`${s.short ? `, \`-${s.short}\`` : ''}` : '—';
  const input = inputOf(s) ? `\`${inputOf(s)}\`` : '—';
  return `| \`${s.key}\`${s.scenario ? ' (per scenario)' : ''} | ${flag} | ${input} | ${unitOf(s)} | ${s.description.replace(/\|/g, '\\|')} |`;
});
const path = new URL('../README.md', import.meta.url);
const text = readFileSync(path, 'utf8');
const start = text.indexOf(HEADER);
const end = text.indexOf('\n\n', start);
writeFileSync(
  path,
  `${text.slice(0, start)}${[HEADER, '|---|---|---|---|---|', ...rows].join('\n')}${text.slice(end)}`,
);
