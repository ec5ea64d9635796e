#!/usr/bin/env bash
# Release step: tag the GitHub Action. Its version is packages/action/package.json's (changesets
# bumps it); its tags are vX.Y.Z and the moving major vX (what `uses: hotpath-dev/hotpath@vX`
# resolves). Two halves, in two jobs of release.yml:
#   --verify  (the build job: read-only token, runs the dependencies' code) when vX.Y.Z does not
#             exist yet: rebuild the committed bundle and verify HEAD holds exactly that bundle;
#             prints the tag to make and, on a runner, writes tag=vX.Y.Z to $GITHUB_OUTPUT.
#   --push    (the publish job: holds contents: write, runs no dependency code, only git) tag HEAD
#             vX.Y.Z, move vX to it, push both. The token comes from $GIT_TOKEN and reaches git
#             through GIT_CONFIG_* variables of this process only: never written to .git/config.
#   --dry-run --verify, then both tags locally; no push.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:---dry-run}

version=$(node -p "require('./packages/action/package.json').version")
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "tag-action: packages/action/package.json's version '$version' is not X.Y.Z" >&2
  exit 1
fi
tag="v$version"
major="v${version%%.*}"
head=$(git rev-parse HEAD)

if [ "$mode" = "--push" ]; then
  : "${GIT_TOKEN:?tag-action --push: GIT_TOKEN is not set}"
  auth="AUTHORIZATION: basic $(printf 'x-access-token:%s' "$GIT_TOKEN" | base64 -w0)"
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0="http.${GITHUB_SERVER_URL:-https://github.com}/.extraheader" GIT_CONFIG_VALUE_0="$auth"
  if [ -n "$(git ls-remote --tags origin "refs/tags/$tag")" ]; then
    echo "tag-action: $tag exists on origin: nothing to tag"
    exit 0
  fi
else
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
  echo "tag-action: $head holds the bundle a fresh build makes: $tag to be tagged"
  if [ "$mode" = "--verify" ]; then
    [ -n "${GITHUB_OUTPUT:-}" ] && echo "tag=$tag" >>"$GITHUB_OUTPUT"
    exit 0
  fi
fi

git tag -a "$tag" -m "hotpath Action $tag" "$head"
git tag -f -a "$major" -m "hotpath Action $major (moving: latest $major.x.y, now $tag)" "$head"
echo "tag-action: $tag and $major -> $head"
if [ "$mode" != "--push" ]; then
  echo "tag-action: --dry-run, not pushing"
  exit 0
fi
git push origin "refs/tags/$tag"
git push --force origin "refs/tags/$major"
