#!/usr/bin/env bash
# Prints the node flags every platform process runs with on the given node binary (default: the
# node on PATH), on one line, empty when there are none. npm start, npm run stack, the events bench
# and the infrastructure tests start their processes with them; the images set the same in
# NODE_OPTIONS (Dockerfile, NODE_FLAGS).
#
# --experimental-async-context-frame (Node 22.7 and later 22s): AsyncLocalStorage, which keeps
# a served call's deadline (libs/kit/src/deadline.ts) and the active trace, carried on V8's
# continuation data instead of async_hooks, which otherwise run a hook for every promise and
# tick of the process: 1–19 % of identity's CPU per GetOrganization in four side-by-side pairs
# (docs/benchmarks/node.md, "AsyncLocalStorage without async_hooks"). Node 24 does this by default
# and refuses the flag; Node 20 has neither. Whether this node accepts it is asked of the node itself.
set -euo pipefail
bin=${1:-node}
"$bin" -p 'process.allowedNodeEnvironmentFlags.has("--experimental-async-context-frame") ? "--experimental-async-context-frame" : ""'
