// Issue #46: the measure workflow `hotpath init` writes lacked `github-token: ''`, which the
// Action's README and the examples have. The templates' steps are checked against the README's
// example workflows, read from the README itself.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { budgetFor, budgetNote, configFile, measureWorkflow, reportWorkflow } from '../src/init/templates.js';

interface Step {
  uses: string;
  with: Record<string, string>;
}

/**
 * The `uses:` steps of a workflow, each with its `with:` values as written (quotes kept, a
 * trailing `# comment` dropped), and the job-level `if:` conditions. Enough YAML for the block
 * style of these workflows; anything else in them fails the comparisons below, not silently.
 */
function stepsOf(yaml: string): { steps: Step[]; conditions: string[] } {
  const steps: Step[] = [];
  const conditions: string[] = [];
  let step: Step | undefined;
  let stepIndent = -1;
  let inWith = false;
  for (const raw of yaml.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '');
    if (line.trim() === '') continue;
    const indent = line.length - line.trimStart().length;
    const uses = /^(\s*)- uses: (\S+)$/.exec(line);
    if (uses) {
      step = { uses: uses[2] ?? '', with: {} };
      steps.push(step);
      stepIndent = (uses[1] ?? '').length;
      inWith = false;
      continue;
    }
    if (step && indent > stepIndent) {
      if (/^\s*with:$/.test(line)) inWith = true;
      else if (inWith) {
        const pair = /^\s*([\w-]+): (.*)$/.exec(line);
        if (pair) step.with[pair[1] ?? ''] = pair[2] ?? '';
      }
      continue;
    }
    step = undefined;
    const condition = /^\s*if: (.*)$/.exec(line);
    if (condition) conditions.push(condition[1] ?? '');
  }
  return { steps, conditions };
}

const readme = readFileSync(new URL('../../action/README.md', import.meta.url), 'utf8');
const blocks = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
const readmeMeasure = blocks.find(
  (b) => b.includes('mode: measure') && b.includes('# .github/workflows/hotpath.yml'),
);
const readmeReport = blocks.find((b) => b.startsWith('# .github/workflows/hotpath-report.yml'));

const hotpathStep = (steps: Step[]) => steps.find((s) => s.uses.startsWith('hotpath-dev/hotpath@'));

describe("hotpath init's workflow templates match the Action README's examples", () => {
  it('the README has both example workflows', () => {
    expect(readmeMeasure).toBeDefined();
    expect(readmeReport).toBeDefined();
  });

  it.each(['npm', 'pnpm', 'yarn', 'bun'] as const)(
    "the measure job's hotpath step has github-token: '' (%s)",
    (packageManager) => {
      const step = hotpathStep(stepsOf(measureWorkflow(packageManager)).steps);
      expect(step?.with['github-token']).toBe("''");
      expect(step?.with.mode).toBe('measure');
    },
  );

  it("the measure workflow's steps are the README's: the same pinned actions, its hotpath inputs (but the matrix's shard), its checkout", () => {
    const template = stepsOf(measureWorkflow('npm')).steps;
    const example = stepsOf(readmeMeasure ?? '').steps.slice(0, 4); // the measure job's steps
    expect(template.map((s) => s.uses)).toEqual(example.map((s) => s.uses));
    const { shard: _matrix, ...exampleInputs } = hotpathStep(example)?.with ?? {};
    expect(hotpathStep(template)?.with).toEqual(exampleInputs);
    for (const [i, step] of example.entries()) {
      if (step === hotpathStep(example)) continue;
      // Every input the README gives each other action, the template gives it with the same value.
      expect(template[i]?.with).toMatchObject(step.with);
    }
  });

  it("the report workflow's steps and its pull-request guard are the README's", () => {
    const template = stepsOf(reportWorkflow());
    const example = stepsOf(readmeReport ?? '');
    expect(template.steps).toEqual(example.steps);
    expect(template.conditions).toEqual(example.conditions);
    expect(template.conditions).toEqual(["github.event.workflow_run.event == 'pull_request'"]);
  });
});

describe('the budget init writes for its scenarios', () => {
  it('writes maxTime when the default 180 s would not hold six pairs of them, and says why', () => {
    // 21 s a scenario and pair at the defaults (2 s warm-up, 5 s window, both sides, half again)
    expect(budgetFor(1, false)).toBeUndefined();
    expect(budgetFor(2, false)).toBe(300);
    expect(budgetFor(5, false)).toBe(660);
    // an SLO's capacity searches: some 40 s a scenario more
    expect(budgetFor(1, true)).toBe(420);
    expect(JSON.parse(configFile('node s.js', ['/a'])).maxTime).toBeUndefined();
    expect(JSON.parse(configFile('node s.js', ['/a', '/b', '/c', '/d', '/e'])).maxTime).toBe(660);
    expect(budgetNote(1, false)).toBeUndefined();
    expect(budgetNote(5, false)).toBe(
      'budget: maxTime 660 s in hotpath.config.json — 5 scenarios take some 105 s a pair of rounds at the defaults; the first look is at 3 pairs, a change near the threshold takes up to 6, and the default 180 s holds 1; fewer scenarios, a shorter budget',
    );
  });
});
