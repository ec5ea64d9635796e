// The architecture's rules, checked in CI (pnpm lint:deps): the dependency direction between
// packages, the stage order inside @hotpath/compare, and no import circle anywhere (type-only
// imports included). A change that breaks one fails the build, not a review.
const compare = '^packages/compare/src/';
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circle, type-only ones included.',
      from: { path: '^packages/[^/]+/src/' },
      to: { circular: true },
    },
    {
      name: 'libraries-know-nothing-of-compare-or-github',
      severity: 'error',
      comment: 'tick-parser, memcache-proto, load-client and overload-guard stand alone.',
      from: { path: '^packages/(tick-parser|memcache-proto|load-client|overload-guard)/src/' },
      to: { path: '(^packages/(compare|action)/|@hotpath/compare|@actions/)' },
    },
    {
      name: 'only-the-action-knows-github',
      severity: 'error',
      from: { path: compare },
      to: { path: '(@actions/|^packages/action/)' },
    },
    {
      name: 'settings-below-all',
      severity: 'error',
      comment: 'settings may use errors and itself only.',
      from: { path: `${compare}settings/` },
      to: { path: `${compare}(model|measure|report|render|shard|cli|verdict|compare|index|internal)` },
    },
    {
      name: 'model-is-types-of-settings-only',
      severity: 'error',
      from: { path: `${compare}(model|allocation-model|health-model|run-artifacts|run-environment)\\.ts$` },
      to: { path: `${compare}(measure|report|render|shard|cli|verdict|compare|index|internal)` },
    },
    {
      name: 'verdict-is-pure-statistics',
      severity: 'error',
      comment:
        'verdict (statistics, outcomes, alpha spending) is used by measure (rounds: auto) and report; it reads settings and model types only.',
      from: { path: `${compare}verdict/` },
      to: { path: `${compare}(measure|report|render|shard|cli)/|${compare}(compare|index|internal)\\.ts$` },
    },
    {
      name: 'measure-before-report-and-render',
      severity: 'error',
      from: { path: `${compare}measure/` },
      to: { path: `${compare}(report|render|shard|cli)/|${compare}(compare|index|internal)\\.ts$` },
    },
    {
      name: 'report-never-reaches-back-or-forward',
      severity: 'error',
      comment: 'report turns shards into a Report: it reads no measure code and writes no text.',
      from: { path: `${compare}report/` },
      to: { path: `${compare}(measure|render|shard|cli)/|${compare}(compare|index|internal)\\.ts$` },
    },
    {
      name: 'render-never-reaches-back',
      severity: 'error',
      comment: 'render takes a Report and nothing else of the pipeline.',
      from: { path: `${compare}render/` },
      to: { path: `${compare}(measure|report|shard|cli|verdict)/|${compare}(compare|index|internal)\\.ts$` },
    },
    {
      name: 'shard-files-are-an-edge',
      severity: 'error',
      from: { path: `${compare}shard/` },
      to: { path: `${compare}(measure|report|render|cli)/|${compare}(compare|index|internal)\\.ts$` },
    },
    {
      name: 'front-doors-use-the-entry-points',
      severity: 'error',
      comment:
        "cli/ reads flags, calls the run layer and prints: it imports the package through its entry points (index.ts, internal.ts), never measure/, report/, verdict/, shard/ or run/ directly. The flags' own modules (settings/) and the leaves errors.ts and printable.ts are the exception: `hotpath --help`, `--version` and a flag's refusal load them alone, not the engine behind the entry points (0.6 s of module loading).",
      from: { path: `${compare}cli/` },
      to: {
        path: compare,
        pathNot: `${compare}(cli/|settings/|index\\.ts$|internal\\.ts$|errors\\.ts$|printable\\.ts$)`,
      },
    },
    {
      name: 'the-action-uses-the-entry-points',
      severity: 'error',
      comment:
        "The Action imports @hotpath/compare's entry points only (the package and its internal subpath).",
      from: { path: '^packages/action/src/' },
      to: {
        path: '^packages/compare/',
        pathNot: '^packages/compare/(dist|src)/(index|internal)\\.(js|ts|d\\.ts)$',
      },
    },
    {
      name: 'the-run-layer-is-on-top',
      severity: 'error',
      comment: 'run/ puts the stages together; no stage reaches up into it.',
      from: {
        path: `${compare}(measure|report|render|verdict|settings|shard|drift|bisect)/|${compare}model\\.ts$`,
      },
      to: { path: `${compare}run/` },
    },
    {
      name: 'drift-writes-no-words',
      severity: 'error',
      comment:
        "drift/ analyses histories and bisect/ searches; their texts (trend, issue, steps) are render's.",
      from: { path: `${compare}(drift|bisect)/` },
      to: { path: `${compare}(render|cli)/` },
    },
    {
      name: 'render-does-no-file-io',
      severity: 'error',
      comment: 'render turns a Report into text; the run layer writes the files (run/report-files.ts).',
      from: { path: `${compare}render/` },
      to: { path: '^(node:)?fs(/promises)?$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    exclude: { path: '(^|/)(dist|test|bench|scripts|node_modules)/' },
  },
};
