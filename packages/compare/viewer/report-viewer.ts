// The script of report.html (bundled with d3-flame-graph and the d3 modules it uses into
// dist/report-viewer.js by scripts/build-viewer.mjs, then inlined into every report.html).
// It reads the flame-graph trees from the page's JSON block and draws them. Names from the
// pull request reach the page only through d3's .text() and attributes, never as markup.
import flamegraph, { colorMapper, type FlameDatum, type FlameGraph } from 'd3-flame-graph';
import { select } from 'd3-selection';

interface FlameNode {
  n: number;
  v: number;
  c?: FlameNode[];
  d?: number;
}
interface FlameData {
  names: string[];
  base?: FlameNode;
  head?: FlameNode;
  diff?: FlameNode;
  /** CPU samples, bytes allocated per request (allocation graphs), µs waited per request (waiting graphs). */
  unit?: 'samples' | 'bytes' | 'micros';
}
type Graph = 'base' | 'head' | 'diff';

const percent = (x: number) => `${(100 * x).toFixed(2)} %`;
const bytes = (x: number) =>
  x >= 1024 * 1024
    ? `${(x / 1024 / 1024).toFixed(2)} MB`
    : x >= 1024
      ? `${(x / 1024).toFixed(1)} KB`
      : `${x.toFixed(1)} B`;
const micros = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} ms` : `${x.toFixed(1)} µs`);
const sign = (x: number) => (x > 0 ? '+' : x < 0 ? '−' : '±');

function draw(
  el: HTMLElement,
  data: FlameData,
  graph: Graph,
  details: HTMLElement | null,
): FlameGraph | undefined {
  const root = data[graph];
  if (!root) return undefined;
  const name = (d: FlameDatum) => data.names[d.data.n] ?? '(unknown)';
  const total = root.v;
  const chart = flamegraph()
    .width(Math.max(320, el.clientWidth))
    .cellHeight(18)
    .minFrameSize(0)
    .transitionDuration(300)
    .getName(name)
    .setSearchMatch((d, term) => term !== '' && name(d).toLowerCase().includes(term.toLowerCase()))
    .setDetailsElement(details)
    .label((d) => {
      const delta = d.data.d ?? 0;
      if (data.unit === 'bytes' || data.unit === 'micros') {
        const amount = data.unit === 'bytes' ? bytes : micros;
        const what = data.unit === 'bytes' ? '' : ' waited';
        const line = `${name(d)}: ${amount(d.data.v)}${what} per request (${percent(d.data.v / total)})`;
        return graph === 'diff'
          ? `${line}; self vs base: ${sign(delta)}${amount(Math.abs(delta))} per request`
          : line;
      }
      const line = `${name(d)}: ${d.data.v} samples (${percent(d.data.v / total)})`;
      if (graph !== 'diff') return line;
      return `${line}; self vs base: ${sign(delta)}${percent(Math.abs(delta) / total)} of samples`;
    });
  if (graph === 'diff') chart.setColorMapper(colorMapper.differentialColorMapper);
  select(el).datum(root).call(chart);
  return chart;
}

function main(): void {
  const block = document.getElementById('hotpath-data');
  const scenarios = JSON.parse(block?.textContent ?? '{}').flames as (FlameData | null)[] | undefined;
  let drawn = 0;
  for (const section of document.querySelectorAll<HTMLElement>('[data-flames]')) {
    const data = scenarios?.[Number(section.dataset.flames)];
    if (!data) continue;
    const details = section.querySelector<HTMLElement>('.flame-details');
    const charts: FlameGraph[] = [];
    for (const el of section.querySelectorAll<HTMLElement>('[data-graph]')) {
      const chart = draw(el, data, el.dataset.graph as Graph, details);
      if (chart) {
        charts.push(chart);
        drawn++;
      }
    }
    const search = section.querySelector<HTMLInputElement>('input[type=search]');
    search?.addEventListener('input', () => {
      for (const chart of charts) search.value ? chart.search(search.value) : chart.clear();
    });
    section.querySelector('button.reset')?.addEventListener('click', () => {
      for (const chart of charts) chart.resetZoom();
    });
  }
  document.documentElement.dataset.flameGraphs = String(drawn);
}

main();
