#!/usr/bin/env bash
# Prints the path of a Node.js binary of the given major version, fetched from the npm
# registry (the `node-<os>-<arch>` packages carry the official binaries) and cached, so CI can
# run the suite on a supported Node when the machine's own is older. Offline reruns use the
# cache. Usage: scripts/node-from-registry.sh 22   (→ .../bin/node)
#   NODE_CACHE_DIR (default ~/.cache/platform/node) is where the binaries are kept.
set -euo pipefail
major=${1:?usage: node-from-registry.sh <major version>}
os=$(node -p process.platform)
arch=$(node -p process.arch)
pkg="node-${os}-${arch}"
cache=${NODE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform/node}
mkdir -p "$cache"

# The newest published version of that major (one registry look-up; the cache serves it offline).
version=$(npm view "${pkg}@${major}" version --json 2>/dev/null | node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const v = s.trim() ? JSON.parse(s) : []; const all = Array.isArray(v) ? v : [v];
    const num = (x) => x.split(".").map(Number);
    all.sort((a, b) => { const [x, y] = [num(a), num(b)]; return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
    process.stdout.write(all.at(-1) ?? "");
  });') || true
if [ -z "$version" ]; then
  # Offline: the newest cached one of that major.
  version=$(ls "$cache" 2>/dev/null | grep -E "^${major}\." | sort -V | tail -1 || true)
  [ -n "$version" ] || { echo "no ${pkg}@${major} in the registry or in $cache" >&2; exit 1; }
fi
dir="$cache/$version"
if [ ! -x "$dir/bin/node" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack "${pkg}@${version}" --silent >/dev/null)
  mkdir -p "$dir"
  tar -xzf "$tmp"/*.tgz -C "$dir" --strip-components=1
fi
"$dir/bin/node" -v >/dev/null
echo "$dir/bin/node"
