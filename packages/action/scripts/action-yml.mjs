// action.yml's inputs come from @hotpath/compare's settings table plus the Action's own inputs
// (src/inputs.ts). `node scripts/action-yml.mjs --write` rewrites action.yml; the test
// test/action-yml.test.ts fails when the committed file differs from what this renders.
import { readFileSync, writeFileSync } from 'node:fs';
import { inputOf, METRIC_OUTPUTS, SETTINGS } from '@hotpath/compare/internal';
import { ACTION_INPUTS } from '../dist/lib/inputs.js';

const yamlString = (text) => `'${String(text).replace(/'/g, "''")}'`;

// A setting input's `default:` is empty, and its default is said in its description instead:
// GitHub sets INPUT_<NAME> to the declared default for every input a workflow leaves out, so a
// declared default would override the same setting in the config file (duration 5 over a config's
// 1, seen on a real repository's run). Unset, a setting is the config file's, else hotpath's own.
function defaultNote(spec) {
  if (spec.default === undefined || spec.default === '') return '';
  return ` Unset: the config file's value, else ${String(spec.default)}.`;
}

function unitNote(spec) {
  if (spec.unit === 's') return ' Seconds (or 500ms, 2m).';
  if (spec.unit === '%') return ' Percent.';
  if (spec.unit === 'points') return ' Percentage points.';
  return '';
}

export function renderActionYml() {
  const lines = [
    "# Generated from @hotpath/compare's settings table and packages/action/src/inputs.ts:",
    '# pnpm --filter @hotpath/action action-yml',
    'name: hotpath',
    "description: Load-test and profile a pull request's Node.js server against its base branch, and comment what got slower and which functions got hotter.",
    'author: hotpath',
    'branding:',
    '  icon: activity',
    '  color: orange',
    'inputs:',
  ];
  for (const spec of SETTINGS) {
    const input = inputOf(spec);
    if (!input) continue;
    lines.push(
      `  ${input}:`,
      `    description: ${yamlString(spec.description + unitNote(spec) + defaultNote(spec))}`,
      "    default: ''",
    );
  }
  for (const [input, description] of Object.entries(ACTION_INPUTS)) {
    lines.push(
      `  ${input}:`,
      `    description: ${yamlString(description.text)}`,
      `    default: ${description.default}`,
    );
  }
  lines.push(
    'outputs:',
    '  verdict:',
    "    description: 'The outcome of the run: regressed (any scenario regressed), inconclusive (else: some scenario could not be told within the threshold), improved, not-worse (every verdict metric shown to be no worse than the threshold, some perhaps better by more), or unchanged (every verdict metric shown to be within the threshold both ways).'",
    '  regressed:',
    '    description: \'"true" when any scenario regressed (verdict is regressed).\'',
    // each metric's output, as the metric catalogue declares it
    ...METRIC_OUTPUTS.flatMap((spec) => [
      `  ${spec.output.name}:`,
      `    description: ${yamlString(spec.output.description)}`,
    ]),
    '  report:',
    '    description: Path of the JSON report.',
    '  comment-url:',
    '    description: URL of the pull-request comment, when one was written.',
    '  shards:',
    '    description: Shards merged into the report (modes report and all).',
    '  results:',
    '    description: The folder a measure job wrote its shard to.',
    '  drift-exceeded:',
    '    description: \'mode drift: "true" when the drift since the reference exceeds the threshold.\'',
    '  drift-confirmed:',
    '    description: \'mode drift: "true" when the drift beyond the threshold is confirmed (the same metric beyond it after 2 of the last 3 runs, or surely beyond it after one): what opens the drift issue.\'',
    '  drift-status:',
    "    description: 'mode drift: what the series says now: beyond (a metric exceeds the threshold), unresolved (none is shown beyond it, but some level''s interval still reaches beyond it: the runs were too noisy or too few to tell), or within (every level''s interval is within it).'",
    '  drift-step-good:',
    "    description: 'modes drift and drift-record, when the drift is confirmed: the last commit surely before its latest step (the good input of a bisect-measure job).'",
    '  drift-step-bad:',
    "    description: 'modes drift and drift-record, when the drift is confirmed: the last commit that may be the first at the new level (the bad input of a bisect-measure job).'",
    '  bisect-conclusion:',
    "    description: 'modes bisect-measure and bisect-record: culprit (one commit named, confirmed by its own comparison), no-culprit, or range (the smallest range the search could narrow to).'",
    '  culprit:',
    '    description: modes bisect-measure and bisect-record, the commit that made the change (empty unless the conclusion is culprit).',
    '  culprit-pull-request:',
    "    description: 'mode bisect-record: the number of the culprit''s pull request, when the API lists one.'",
    '  issue-url:',
    '    description: modes drift and bisect-record, the drift issue written, closed or commented on by this run.',
    'runs:',
    '  using: node24',
    '  main: packages/action/dist/index.js',
    '',
  );
  return lines.join('\n');
}

const path = new URL('../../../action.yml', import.meta.url);
if (process.argv.includes('--write')) writeFileSync(path, renderActionYml());
else if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  if (readFileSync(path, 'utf8') !== renderActionYml()) {
    console.error('action.yml differs from the settings table: run pnpm --filter @hotpath/action action-yml');
    process.exit(1);
  }
}
