// The part of d3-flame-graph's API report-viewer.ts uses (the package ships no types).
declare module 'd3-flame-graph' {
  export interface FlameDatum {
    data: { n: number; v: number; d?: number };
    value: number;
    x0: number;
    x1: number;
  }
  export interface FlameGraph {
    (selection: unknown): void;
    width(w: number): FlameGraph;
    cellHeight(h: number): FlameGraph;
    minFrameSize(px: number): FlameGraph;
    transitionDuration(ms: number): FlameGraph;
    getName(fn: (d: FlameDatum) => string): FlameGraph;
    label(fn: (d: FlameDatum) => string): FlameGraph;
    setColorMapper(fn: (d: FlameDatum, original: string) => string): FlameGraph;
    setSearchMatch(fn: (d: FlameDatum, term: string) => boolean): FlameGraph;
    setDetailsElement(el: HTMLElement | null): FlameGraph;
    search(term: string): void;
    clear(): void;
    resetZoom(): void;
  }
  export default function flamegraph(): FlameGraph;
  export const colorMapper: {
    differentialColorMapper(d: FlameDatum, original: string): string;
  };
}
