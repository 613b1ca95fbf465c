#!/usr/bin/env bash
# A screenshot of one real booking trace in Zipkin's UI, taken with headless Chromium (Debian's
# `chromium` package, installed with apt-get when missing), for docs/observability.md.
#   bash scripts/observability/screenshot.sh [TRACE_ID] [OUT.png]
# Without TRACE_ID it books one meeting with a traceparent against the running stack
# (scripts/observability/trace-booking.ts; start the stack with WEBHOOKS_ALLOW_PRIVATE_TARGETS=true
# after scripts/observability.sh start, so its spans go to Zipkin and the delivery reaches the
# script's receiver). OUT defaults to docs/images/zipkin-booking-trace.png.
set -euo pipefail
cd "$(dirname "$0")/../.."
ZIPKIN="http://127.0.0.1:${ZIPKIN_PORT:-9411}"
trace_id=${1:-}
out=${2:-docs/images/zipkin-booking-trace.png}

log() { printf 'screenshot.sh: %s\n' "$*" >&2; }
curl -fsS -o /dev/null "$ZIPKIN/health" || { log "no Zipkin at $ZIPKIN: bash scripts/observability.sh start"; exit 1; }
if ! command -v chromium >/dev/null; then
  log "installing Debian's chromium package (apt-get)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
if [ -z "$trace_id" ]; then
  log "booking a meeting through the gateway on port ${GATEWAY_PORT:-8080}"
  trace_id=$(node --import tsx scripts/observability/trace-booking.ts | node -e 'process.stdin.on("data", (d) => console.log(JSON.parse(d).traceId))')
fi
# The processes export in batches (every 5 s by default): wait until the trace stops growing.
count=-1
for _ in $(seq 1 40); do
  now=$(curl -fsS "$ZIPKIN/api/v2/trace/$trace_id" 2>/dev/null | node -e 'let b="";process.stdin.on("data",(d)=>b+=d).on("end",()=>{try{console.log(JSON.parse(b).length)}catch{console.log(0)}})') || true
  [ "$now" -gt 0 ] && [ "$now" -eq "$count" ] && break
  count=$now
  sleep 3
done
[[ "$trace_id" =~ ^[0-9a-f]{32}$ ]] || { log "not a trace id: $trace_id"; exit 2; }
curl -fsS -o /dev/null "$ZIPKIN/api/v2/trace/$trace_id" || { log "Zipkin has no trace $trace_id"; exit 1; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
mkdir -p "$(dirname "$out")"
case $out in /*) abs_out=$out ;; *) abs_out="$(pwd)/$out" ;; esac
log "trace $trace_id → $out"
# A fresh profile, nothing fetched from outside: the UI and its data come from Zipkin alone.
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
  --user-data-dir="$profile" --window-size=1600,1650 --virtual-time-budget=15000 \
  --screenshot="$abs_out" "$ZIPKIN/zipkin/traces/$trace_id" >/dev/null 2>&1
[ -s "$out" ] || { log "chromium wrote no screenshot"; exit 1; }
log "wrote $out ($(wc -c <"$out") bytes)"
