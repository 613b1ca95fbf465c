#!/usr/bin/env bash
# Cuts a release: records the baselines the contract gates compare against, and tags it.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/release.sh VERSION        (or: npm run release -- VERSION)

Cuts release VERSION (semver, e.g. 1.1.0) from HEAD:
  1. refuses a dirty tree, a VERSION that is not newer than the last release's
     (releases/baseline.json), an existing tag vVERSION, a CHANGELOG.md without a
     "## [VERSION]" section, a stale api/openapi.json, or failing contract gates;
  2. commits "release: vVERSION": the version in package.json and package-lock.json, and the baselines under
     releases/baseline/: openapi.json (the public document, webhook payloads v2 and legacy
     included), proto.binpb (buf image of proto/: RPC and Kafka event messages),
     migrations.json (every migration's sha-256: these are now released);
  3. tags that commit vVERSION, and commits releases/baseline.json =
     {"version": "VERSION", "commit": "<full sha of the tagged commit>", "tag": "vVERSION"}.
Nothing is pushed. See docs/compatibility.md.
USAGE
}

case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  "") usage >&2; exit 2 ;;
esac
[ $# -eq 1 ] || { usage >&2; exit 2; }
version=$1
tag="v$version"
cd "$(dirname "$0")/.."
fail() { echo "release: $*" >&2; exit 1; }
semver() { node -e 'const s = require("semver"); const [op, a, b] = process.argv.slice(1); process.exit((op === "valid" ? s.valid(a) === a : s.gt(a, b)) ? 0 : 1)' "$@"; }

semver valid "$version" || fail "'$version' is not a semver version (MAJOR.MINOR.PATCH)"
[ -z "$(git status --porcelain)" ] || fail "the working tree is not clean: commit or stash first"
if [ -f releases/baseline.json ]; then
  last=$(node -p 'require("./releases/baseline.json").version')
  semver gt "$version" "$last" || fail "$version is not newer than the last release, $last"
fi
if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then fail "tag $tag exists already"; fi
grep -Eq "^## \[?v?${version//./\\.}\]?( |$)" CHANGELOG.md || fail "CHANGELOG.md has no section for $version (## [$version] - $(date -u +%F))"

echo "== api/openapi.json is up to date, and the contract gates pass"
node --import tsx scripts/contract-gates.ts

echo "== baselines of $tag"
mkdir -p releases/baseline
cp api/openapi.json releases/baseline/openapi.json
(cd proto && ../node_modules/.bin/buf build --exclude-source-info -o ../releases/baseline/proto.binpb)
node --import tsx -e '
  import("./scripts/gates/migration-lint.ts").then(({ migrationBaseline }) => {
    require("node:fs").writeFileSync("releases/baseline/migrations.json", `${JSON.stringify(migrationBaseline("."), null, 2)}\n`);
  });'
# package.json and package-lock.json alike (the lockfile repeats the root version).
npm version "$version" --no-git-tag-version --allow-same-version --workspaces=false >/dev/null
git add releases/baseline package.json package-lock.json
git commit -q -m "release: $tag"
commit=$(git rev-parse HEAD)
git tag -a "$tag" -m "$tag" "$commit"

printf '{\n  "version": "%s",\n  "commit": "%s",\n  "tag": "%s"\n}\n' "$version" "$commit" "$tag" >releases/baseline.json
git add releases/baseline.json
git commit -q -m "release: record $tag as the baseline"
echo "released $tag at $commit; releases/baseline.json records it (push the tag with: git push origin $tag)"
