#!/usr/bin/env bash
# Release step: tag the GitHub Action. Its version is packages/action/package.json's (changesets
# bumps it). When tag vX.Y.Z does not exist yet: rebuild the committed bundle, verify that HEAD
# holds exactly that bundle, then tag HEAD vX.Y.Z and move the major tag vX (what
# `uses: hotpath-dev/hotpath@vX` resolves) to it, and push both to origin.
# `--dry-run` does everything but the push (and leaves the local tags in place).
set -euo pipefail
cd "$(dirname "$0")/.."
dry_run=false
[ "${1:-}" = "--dry-run" ] && dry_run=true

version=$(node -p "require('./packages/action/package.json').version")
tag="v$version"
major="v${version%%.*}"
head=$(git rev-parse HEAD)

if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then
  echo "tag-action: $tag exists ($(git rev-parse "$tag^{commit}")): nothing to tag"
  exit 0
fi

if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "tag-action: the work tree has changes, refusing to tag:" >&2
  git status --short --untracked-files=no >&2
  exit 1
fi

echo "tag-action: rebuilding the Action bundle to verify the committed one"
pnpm --filter @hotpath/action build
if [ -n "$(git status --porcelain -- packages/action/dist)" ]; then
  git status --short -- packages/action/dist >&2
  echo "tag-action: packages/action/dist at $head differs from a fresh build: not tagging $tag" >&2
  exit 1
fi

git tag -a "$tag" -m "hotpath Action $tag" "$head"
git tag -f -a "$major" -m "hotpath Action $major (moving: latest $major.x.y, now $tag)" "$head"
echo "tag-action: $tag and $major -> $head"
if $dry_run; then
  echo "tag-action: --dry-run, not pushing"
  exit 0
fi
git push origin "refs/tags/$tag"
git push --force origin "refs/tags/$major"
