// The fixed reference of a drift series: `tag:PATTERN` — the highest release tag by semver among
// the tags matching the glob (e.g. tag:v*) — or any ref, pinned (a tag, branch or commit).
import semver from 'semver';
import { HotpathCompareError } from '../errors.js';
import { git, resolveCommit } from '../measure/checkout.js';
import { checkReference } from '../settings/front-door.js';
import type { Reference } from './history.js';

/**
 * The highest release of `tags` by semver: the part from the first digit on must be a version
 * (v1.4.0, 1.4.0, release-1.4.0); pre-releases (1.5.0-rc.1) and other tags are left out.
 */
export function highestSemverTag(tags: readonly string[]): string | undefined {
  let best: { tag: string; version: string } | undefined;
  for (const tag of tags) {
    const version = semver.valid(tag.slice(tag.search(/\d/)));
    if (tag.search(/\d/) < 0 || !version || semver.prerelease(version)) continue;
    if (!best || semver.gt(version, best.version)) best = { tag, version };
  }
  return best?.tag;
}

/** Resolves `tag:PATTERN` or a ref in the clone at `root` to the reference's name and commit. */
export async function resolveReference(root: string, spec: string): Promise<Reference> {
  // The form is checked as the front doors check --reference and the reference input.
  checkReference(spec);
  const value = spec.trim();
  if (value.startsWith('tag:')) {
    const pattern = value.slice(4);
    const tags = (await git(root, ['tag', '--list', '--', pattern])).split('\n').filter(Boolean);
    const tag = highestSemverTag(tags);
    if (!tag)
      throw new HotpathCompareError(
        'HP_COMPARE_INVALID_SETTING',
        `reference ${JSON.stringify(spec)}: no tag matching ${JSON.stringify(pattern)} is a semver version (${tags.length} tags match; with actions/checkout, fetch-depth: 0 brings the tags)`,
      );
    return { ref: tag, sha: await resolveCommit(root, `refs/tags/${tag}`) };
  }
  return { ref: value, sha: await resolveCommit(root, value) };
}
