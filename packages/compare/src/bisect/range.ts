// The commits a bisect searches: bad's first-parent history back to good (good first, bad last),
// each with its subject for people. Good must be on that history: a merge's second parent, or an
// unrelated commit, would make the halves of the search mean nothing.
import { HotpathCompareError } from '../errors.js';
import { git, resolveCommit } from '../measure/checkout.js';
import { printable } from '../printable.js';

export interface RangeCommit {
  sha: string;
  /** The commit's subject line, printable and at most 120 characters. */
  subject: string;
}

/** Most commits a search takes (2¹² : twelve steps). */
export const MAX_RANGE = 4096;

export async function firstParentRange(
  root: string,
  goodRef: string,
  badRef: string,
): Promise<RangeCommit[]> {
  const good = await resolveCommit(root, goodRef);
  const bad = await resolveCommit(root, badRef);
  const listed = (
    await git(root, ['rev-list', '--first-parent', '--format=%H %s', '--no-commit-header', `${good}..${bad}`])
  )
    .split('\n')
    .filter(Boolean);
  if (listed.length === 0)
    throw new HotpathCompareError(
      'HP_COMPARE_BISECT_RANGE',
      `--bad ${JSON.stringify(badRef)} is not after --good ${JSON.stringify(goodRef)}: no commit between them (give the older, good commit as --good)`,
    );
  if (listed.length > MAX_RANGE)
    throw new HotpathCompareError(
      'HP_COMPARE_BISECT_RANGE',
      `${listed.length} commits between --good and --bad: at most ${MAX_RANGE} (narrow the range)`,
    );
  const commits = listed.reverse().map((line) => {
    const space = line.indexOf(' ');
    const subject = printable(space < 0 ? '' : line.slice(space + 1));
    return {
      sha: space < 0 ? line : line.slice(0, space),
      subject: subject.length > 120 ? `${subject.slice(0, 119)}…` : subject,
    };
  });
  const first = commits[0]?.sha ?? '';
  const parent = await git(root, ['rev-parse', '--verify', `${first}^1`]).catch(() => '');
  if (parent !== good)
    throw new HotpathCompareError(
      'HP_COMPARE_BISECT_RANGE',
      `--good ${JSON.stringify(goodRef)} is not on the first-parent history of --bad ${JSON.stringify(badRef)}: bisect searches the commits of one line of history (give a commit of that line, e.g. the merge base)`,
    );
  const goodSubject = await git(root, ['log', '-1', '--format=%s', good]).catch(() => '');
  return [{ sha: good, subject: printable(goodSubject).slice(0, 120) }, ...commits];
}
