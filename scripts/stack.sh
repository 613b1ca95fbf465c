#!/usr/bin/env bash
# The distributed runtime as local processes: every service and the gateway in a process
# of its own, against the machine's Postgres (a database per service), Redis and a local
# Kafka broker (scripts/kafka.sh). Pids and logs live in .run/.
set -euo pipefail
cd "$(dirname "$0")/.."

RUN_DIR=${STACK_RUN_DIR:-.run}
# Each port: the environment's value, else the default after the '='.
for setting in GATEWAY_PORT=8080 IDENTITY_PORT=7101 SCHEDULING_PORT=7102 CRM_PORT=7103 REVENUE_PORT=7104 \
  ANALYTICS_PORT=7105 WEBHOOKS_PORT=7106 DELIVERY_PORT=7116 ADMIN_PORT=8081 CRM_ADMIN_PORT=8083 \
  REVENUE_ADMIN_PORT=8084 ANALYTICS_ADMIN_PORT=8085; do
  name=${setting%%=*}
  printf -v "$name" '%s' "${!name:-${setting#*=}}"
done
unset setting name
# Prometheus /metrics of each process: METRICS_BASE_PORT + its place in METRICS_ORDER.
METRICS_BASE_PORT=${METRICS_BASE_PORT:-9460}
METRICS_ORDER="gateway identity scheduling crm-data revenue analytics webhooks webhooks-delivery"
metrics_port() {
  local i=0 n
  for n in $METRICS_ORDER; do
    if [ "$n" = "$1" ]; then echo $((METRICS_BASE_PORT + i)); return 0; fi
    i=$((i + 1))
  done
  return 1
}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432}
# Database names are DB_PREFIX + the service (platform_identity, ...): another prefix gives a
# second stack on the same Postgres its own data (with its own ports, KAFKA_PORT, STACK_RUN_DIR).
DB_PREFIX=${STACK_DB_PREFIX:-platform_}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379}
export KAFKA_BROKERS=${KAFKA_BROKERS:-127.0.0.1:${KAFKA_PORT:-19092}}
export PLATFORM_CONTEXT_SECRET=${PLATFORM_CONTEXT_SECRET:-dev-context-secret-change-me-0123456789}
export PLATFORM_ADMIN_SECRET=${PLATFORM_ADMIN_SECRET:-dev-admin-secret-change-me}
# compiled: `npm run build` first, then each process runs its dist/<process>/main.js, as the
# images do; source: straight from the TypeScript sources through tsx (no build step).
STACK_RUNTIME=${STACK_RUNTIME:-compiled}
# Extra node flags for every process, e.g. STACK_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"
# (node refuses --cpu-prof in NODE_OPTIONS).
STACK_NODE_FLAGS=${STACK_NODE_FLAGS:-}

usage() {
  cat <<TXT
usage: scripts/stack.sh start|stop|status|logs [name]

  start    start Postgres/Redis if stopped, Kafka (scripts/kafka.sh), then each service
           and the gateway as separate processes; waits until each is ready
  stop     stop the processes this script started (by their pid files), then Kafka if
           this script started it
  status   show which processes run, and how often each was restarted
  targets  print process=metrics-port for each process (what Prometheus scrapes)

Each process runs under a small supervisor that restarts it when it exits (after 1 s, then
2 s, 4 s … up to 30 s; back to 1 s after a run of a minute); its log says so.
  logs     tail the log of one process ($PROCESSES)

Ports: gateway http://127.0.0.1:$GATEWAY_PORT; RPC identity $IDENTITY_PORT, scheduling $SCHEDULING_PORT,
crm-data $CRM_PORT, revenue $REVENUE_PORT, analytics $ANALYTICS_PORT, webhooks $WEBHOOKS_PORT, webhook
delivery worker $DELIVERY_PORT; admin planes identity $ADMIN_PORT, crm-data $CRM_ADMIN_PORT, revenue
$REVENUE_ADMIN_PORT, analytics $ANALYTICS_ADMIN_PORT; Prometheus /metrics on $METRICS_BASE_PORT + n
(n: the process's place in the list above, gateway 0).
Settings come from the environment (the *_PORT variables above, PG_URL, REDIS_URL, KAFKA_BROKERS,
PLATFORM_CONTEXT_SECRET, PLATFORM_ADMIN_SECRET, SANDBOX_SEED, STACK_DB_PREFIX, STACK_RUN_DIR,
STACK_NODE_FLAGS: extra node flags for every process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
The processes run on Node 22, as the images do: the node on PATH when it is that new, else one
fetched from the npm registry and cached (scripts/node-from-registry.sh); STACK_NODE=<binary> picks
another (STACK_NODE=node: the one on PATH). Each process gets the node flags the images give it
(scripts/node-flags.sh: on Node 22, --experimental-async-context-frame).
STACK_RUNTIME=compiled (the default) builds dist/ with esbuild first and runs it, as the images
do; STACK_RUNTIME=source runs the TypeScript sources through tsx.
When scripts/observability.sh runs Zipkin (ZIPKIN_PORT, default 9411), every process sends its
spans there (OTEL_TRACES_EXPORTER=zipkin; sampling parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG
default 1: every request; an integrator's sampled traceparent is always kept); when it runs
Prometheus, the processes' /metrics ports become its targets. Neither running: nothing changes.
TXT
}

PROCESSES="identity scheduling crm-data revenue analytics webhooks webhooks-delivery gateway"

# A zombie (exited, not yet reaped) still answers kill -0: it is not running.
alive() {
  local stat
  stat=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [[ -n $stat && $stat != Z* ]]
}

# Running means its supervisor is alive (the process itself may be between restarts).
running() { [ -f "$RUN_DIR/$1.pid" ] && alive "$(cat "$RUN_DIR/$1.pid")"; }

# Runs one process and restarts it whenever it exits, waiting 1 s, 2 s, 4 s … up to 30 s
# between restarts (back to 1 s once a run lasted a minute). Its pid is $name.pid, the
# current process's $name.child; $name.restarts counts restarts with the last exit status.
supervise() {
  local name=$1; shift
  set +e
  local child="" restarts=0 delay=1 started code
  trap 'rm -f "$RUN_DIR/$name.child"; [ -n "$child" ] && kill -TERM "$child" 2>/dev/null && wait "$child"; exit 0' TERM INT
  while :; do
    started=$(date +%s)
    "$@" >>"$RUN_DIR/$name.log" 2>&1 &
    child=$!
    echo "$child" >"$RUN_DIR/$name.child"
    wait "$child"
    code=$?
    restarts=$((restarts + 1))
    [ $(($(date +%s) - started)) -ge 60 ] && delay=1
    echo "$restarts $code $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$RUN_DIR/$name.restarts"
    echo "stack.sh: $name exited with status $code; restart $restarts in ${delay} s" >>"$RUN_DIR/$name.log"
    sleep "$delay" &
    wait $!
    delay=$((delay * 2 > 30 ? 30 : delay * 2))
  done
}

wait_port() {
  local name=$1 port=$2
  for _ in $(seq 1 120); do
    if port_open "$port"; then return 0; fi
    # A process that exits while starting would only be restarted into the same failure.
    if [ -f "$RUN_DIR/$name.restarts" ] || ! running "$name"; then
      echo "$name exited while starting; last log lines:" >&2
      tail -n 30 "$RUN_DIR/$name.log" >&2
      stop_one "$name" >/dev/null
      return 1
    fi
    sleep 0.5
  done
  echo "$name did not open port $port within 60 s" >&2
  return 1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The ports each process listens on: its RPC or HTTP port, its admin plane, its /metrics.
ports_of() {
  local own
  case $1 in
    gateway) own="$GATEWAY_PORT" ;;
    identity) own="$IDENTITY_PORT $ADMIN_PORT" ;;
    scheduling) own="$SCHEDULING_PORT" ;;
    crm-data) own="$CRM_PORT $CRM_ADMIN_PORT" ;;
    revenue) own="$REVENUE_PORT $REVENUE_ADMIN_PORT" ;;
    analytics) own="$ANALYTICS_PORT $ANALYTICS_ADMIN_PORT" ;;
    webhooks) own="$WEBHOOKS_PORT" ;;
    webhooks-delivery) own="$DELIVERY_PORT" ;;
  esac
  echo "$own $(metrics_port "$1")"
}

# A port that something else holds (another stack, another run directory, another program)
# would pass the readiness check while our process fails to bind it and restarts in a loop:
# the stack would say "ready" and serve another build. Refuse before starting anything.
refuse_taken_ports() {
  local taken="" name port
  for name in $PROCESSES; do
    running "$name" && continue
    for port in $(ports_of "$name"); do
      if port_open "$port"; then taken="$taken $port ($name)"; fi
    done
  done
  [ -z "$taken" ] && return 0
  echo "stack.sh: port(s)$taken already in use by another process (another stack, another STACK_RUN_DIR, or another program)." >&2
  echo "Stop it, or give this stack other ports (the *_PORT variables and METRICS_BASE_PORT; see --help)." >&2
  exit 1
}

launch() {
  local name=$1 port=$2; shift 2
  if running "$name"; then echo "$name: already running (pid $(cat "$RUN_DIR/$name.child" 2>/dev/null || echo '?'))"; return 0; fi
  echo "$name: starting"
  rm -f "$RUN_DIR/$name.restarts" "$RUN_DIR/$name.child"
  : >"$RUN_DIR/$name.log"
  # Detached from this shell: the supervisor outlives `stack.sh start`. A static Kafka member
  # id per process: restarted after a crash, it takes its old place in its consumer groups at
  # once instead of waiting out the dead member's session.
  (trap '' HUP; supervise "$name" env KAFKA_GROUP_INSTANCE_ID="stack-$name" "$@") </dev/null >/dev/null 2>&1 &
  echo $! >"$RUN_DIR/$name.pid"
  wait_port "$name" "$port"
  echo "$name: ready on port $port (pid $(cat "$RUN_DIR/$name.child"), log $RUN_DIR/$name.log)"
}

stop_one() {
  local name=$1
  if running "$name"; then
    local pid child
    pid=$(cat "$RUN_DIR/$name.pid")
    child=$(cat "$RUN_DIR/$name.child" 2>/dev/null || true)
    # The supervisor passes SIGTERM on to the process and waits for it to drain.
    kill "$pid"
    for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.25; done
    if alive "$pid"; then
      [ -n "$child" ] && kill -9 "$child" 2>/dev/null
      kill -9 "$pid" 2>/dev/null
    fi
    echo "$name: stopped"
  fi
  rm -f "$RUN_DIR/$name.pid" "$RUN_DIR/$name.child" "$RUN_DIR/$name.restarts"
}

# Spans to Zipkin and scrape targets for Prometheus, only while scripts/observability.sh runs them;
# settings the caller gave win.
observability() {
  if bash scripts/observability.sh status zipkin >/dev/null 2>&1; then
    export OTEL_TRACES_EXPORTER=${OTEL_TRACES_EXPORTER:-zipkin}
    export OTEL_EXPORTER_ZIPKIN_ENDPOINT=${OTEL_EXPORTER_ZIPKIN_ENDPOINT:-http://127.0.0.1:${ZIPKIN_PORT:-9411}/api/v2/spans}
    export OTEL_TRACES_SAMPLER=${OTEL_TRACES_SAMPLER:-parentbased_traceidratio}
    export OTEL_TRACES_SAMPLER_ARG=${OTEL_TRACES_SAMPLER_ARG:-1}
    echo "traces: Zipkin http://127.0.0.1:${ZIPKIN_PORT:-9411}/zipkin/ ($OTEL_TRACES_SAMPLER $OTEL_TRACES_SAMPLER_ARG)"
  fi
  if bash scripts/observability.sh status prometheus >/dev/null 2>&1; then
    # shellcheck disable=SC2046
    bash scripts/observability.sh targets stack $(targets)
    echo "metrics: Prometheus http://127.0.0.1:${PROMETHEUS_PORT:-9090}/targets scrapes every process"
  fi
}

targets() {
  local n
  for n in $METRICS_ORDER; do printf '%s=%s ' "$n" "$(metrics_port "$n")"; done
  echo
}

case "${1:-}" in
  start)
    mkdir -p "$RUN_DIR"
    refuse_taken_ports
    # Node 22, as the images run (scripts/stack-node.sh; STACK_NODE picks another).
    node_bin=$(bash scripts/stack-node.sh)
    # The flags the images give every process in NODE_OPTIONS, as this node takes them.
    node_flags=$(bash scripts/node-flags.sh "$node_bin")
    [ -z "$node_flags" ] || echo "node flags: $node_flags (scripts/node-flags.sh)" >&2
    case "$STACK_RUNTIME" in
      compiled | source) ;;
      *) echo "STACK_RUNTIME must be compiled or source, not '$STACK_RUNTIME'" >&2; exit 2 ;;
    esac
    bash scripts/infra.sh up
    bash scripts/kafka.sh start --mark "$RUN_DIR/kafka.started-by-stack"
    observability
    local_url() { echo "http://127.0.0.1:$1"; }
    case "$STACK_RUNTIME" in
      compiled)
        echo "building dist/ (npm run build; STACK_RUNTIME=source skips it)…"
        npm run --silent build >"$RUN_DIR/build.log" 2>&1 || { tail -n 30 "$RUN_DIR/build.log" >&2; exit 1; }
        # The command line that runs a process: its compiled bundle.
        entry() { echo "$node_bin $node_flags $STACK_NODE_FLAGS dist/$1/main.js"; } ;;
      source) entry() { echo "$node_bin $node_flags $STACK_NODE_FLAGS --import tsx $2"; } ;;
    esac
    launch identity "$IDENTITY_PORT" PORT="$IDENTITY_PORT" ADMIN_PORT="$ADMIN_PORT" METRICS_PORT="$(metrics_port identity)" \
      DATABASE_URL="$PG_URL/${DB_PREFIX}identity" $(entry identity services/identity/src/main.ts)
    launch scheduling "$SCHEDULING_PORT" PORT="$SCHEDULING_PORT" METRICS_PORT="$(metrics_port scheduling)" \
      DATABASE_URL="$PG_URL/${DB_PREFIX}scheduling" $(entry scheduling services/scheduling/src/main.ts)
    launch crm-data "$CRM_PORT" PORT="$CRM_PORT" ADMIN_PORT="$CRM_ADMIN_PORT" METRICS_PORT="$(metrics_port crm-data)" \
      DATABASE_URL="$PG_URL/${DB_PREFIX}crm" $(entry crm-data services/crm-data/src/main.ts)
    launch revenue "$REVENUE_PORT" PORT="$REVENUE_PORT" ADMIN_PORT="$REVENUE_ADMIN_PORT" METRICS_PORT="$(metrics_port revenue)" \
      DATABASE_URL="$PG_URL/${DB_PREFIX}revenue" CRM_URL="$(local_url "$CRM_PORT")" \
      IDENTITY_URL="$(local_url "$IDENTITY_PORT")" $(entry revenue services/revenue/src/main.ts)
    launch analytics "$ANALYTICS_PORT" PORT="$ANALYTICS_PORT" ADMIN_PORT="$ANALYTICS_ADMIN_PORT" \
      METRICS_PORT="$(metrics_port analytics)" DATABASE_URL="$PG_URL/${DB_PREFIX}analytics" \
      CRM_URL="$(local_url "$CRM_PORT")" $(entry analytics services/analytics/src/main.ts)
    launch webhooks "$WEBHOOKS_PORT" PORT="$WEBHOOKS_PORT" METRICS_PORT="$(metrics_port webhooks)" \
      DATABASE_URL="$PG_URL/${DB_PREFIX}webhooks" $(entry webhooks services/webhooks/src/main.ts)
    launch webhooks-delivery "$DELIVERY_PORT" DELIVERY_PORT="$DELIVERY_PORT" METRICS_PORT="$(metrics_port webhooks-delivery)" \
      DATABASE_URL="$PG_URL/${DB_PREFIX}webhooks" $(entry webhooks-delivery services/webhooks/src/delivery-main.ts)
    launch gateway "$GATEWAY_PORT" PORT="$GATEWAY_PORT" METRICS_PORT="$(metrics_port gateway)" \
      IDENTITY_URL="$(local_url "$IDENTITY_PORT")" SCHEDULING_URL="$(local_url "$SCHEDULING_PORT")" \
      CRM_URL="$(local_url "$CRM_PORT")" REVENUE_URL="$(local_url "$REVENUE_PORT")" \
      ANALYTICS_URL="$(local_url "$ANALYTICS_PORT")" WEBHOOKS_URL="$(local_url "$WEBHOOKS_PORT")" \
      $(entry gateway gateway/src/main.ts)
    echo
    echo "Gateway: http://127.0.0.1:$GATEWAY_PORT/api/v1alpha1  (docs: http://127.0.0.1:$GATEWAY_PORT/docs)"
    echo "Sandbox keys: npx platform sandbox keys --admin-url http://127.0.0.1:$ADMIN_PORT"
    ;;
  stop)
    for n in gateway webhooks-delivery webhooks analytics revenue crm-data scheduling identity; do stop_one "$n"; done
    # Prometheus stops scraping what is gone (no PlatformTargetDown for a stack stopped on purpose).
    if bash scripts/observability.sh status prometheus >/dev/null 2>&1; then bash scripts/observability.sh targets stack; fi
    bash scripts/kafka.sh stop --if-marked "$RUN_DIR/kafka.started-by-stack"
    ;;
  status)
    for n in $PROCESSES; do
      if running "$n"; then
        child=$(cat "$RUN_DIR/$n.child" 2>/dev/null || true)
        if [ -n "$child" ] && alive "$child"; then state="running (pid $child)"; else state="restarting"; fi
        if [ -f "$RUN_DIR/$n.restarts" ]; then
          read -r count code at <"$RUN_DIR/$n.restarts"
          state="$state, restarted $count time(s), last exit status $code at $at"
        fi
        echo "$n: $state"
      else
        echo "$n: stopped"
      fi
    done
    bash scripts/kafka.sh status || true
    ;;
  targets) targets ;;
  logs) tail -n 100 -f "$RUN_DIR/${2:?name: one of $PROCESSES}.log" ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
