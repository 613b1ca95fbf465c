#!/usr/bin/env bash
# Prints the node binary the platform's processes run on outside the images (npm run stack, the
# events bench), and says which on stderr: Node 22, the images' (the Dockerfile's NODE_IMAGE)
# and the one package.json's engines asks for. STACK_NODE names another binary (STACK_NODE=node:
# the one on PATH, whatever its version). When the machine's node is older, Node 22 comes from
# the npm registry (scripts/node-from-registry.sh, cached under ~/.cache/platform/node), as CI
# does for the unit suite: on Node 20 the services cost a fifth to a third more CPU per write
# (docs/benchmarks/node.md, "The stack on Node 22"). Exits 2 when STACK_NODE is no binary.
set -euo pipefail
cd "$(dirname "$0")/.."
major=22
if [ -n "${STACK_NODE:-}" ]; then
  bin=$(command -v "$STACK_NODE") || { echo "STACK_NODE=$STACK_NODE: no such node binary" >&2; exit 2; }
elif [ "$(node -p 'process.versions.node.split(".")[0]')" -ge "$major" ]; then
  bin=$(command -v node)
else
  machine=$(node -v)
  echo "the machine's node is $machine, older than the images' $major: fetching Node $major from the npm registry (cached; STACK_NODE=node runs $machine)…" >&2
  bin=$(bash scripts/node-from-registry.sh "$major") || {
    echo "no Node $major to be had (offline, nothing cached): running on $machine" >&2
    bin=$(command -v node)
  }
fi
echo "processes run on Node $("$bin" -v) ($bin)" >&2
echo "$bin"
