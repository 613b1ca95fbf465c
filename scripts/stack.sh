#!/usr/bin/env bash
# The distributed runtime as local processes: every service and the gateway in a process
# of its own, against the machine's Postgres (a database per service), Redis and a local
# Kafka broker (scripts/kafka.sh). Pids and logs live in .run/.
set -euo pipefail
cd "$(dirname "$0")/.."

RUN_DIR=${STACK_RUN_DIR:-.run}
# Each port: the environment's value, else the default after the '='.
for setting in GATEWAY_PORT=8080 IDENTITY_PORT=7101 SCHEDULING_PORT=7102 CRM_PORT=7103 REVENUE_PORT=7104 \
  ANALYTICS_PORT=7105 WEBHOOKS_PORT=7106 DELIVERY_PORT=7116 REQUEST_LOGS_PORT=7107 ADMIN_PORT=8081 CRM_ADMIN_PORT=8083 \
  REVENUE_ADMIN_PORT=8084 ANALYTICS_ADMIN_PORT=8085; do
  name=${setting%%=*}
  printf -v "$name" '%s' "${!name:-${setting#*=}}"
done
unset setting name
# Prometheus /metrics of each process: METRICS_BASE_PORT + its place in METRICS_ORDER.
METRICS_BASE_PORT=${METRICS_BASE_PORT:-9460}
# request-logs came later: last, so the other processes keep their ports.
METRICS_ORDER="gateway identity scheduling crm-data revenue analytics webhooks webhooks-delivery request-logs"
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
# SO_REUSEPORT for every process, so that `roll` starts a replacement on the ports it replaces
# (libs/kit/src/shared-port.ts); processes started any other way keep EADDRINUSE on a taken port.
export LISTEN_REUSE_PORT=1
# Node's compile cache (V8 code of every module loaded, Node 22.1+), given to the processes the
# stack starts (not to this script's own node calls, which would create it before any check):
# a restarted process loads its modules' code instead of compiling it again
# (docs/benchmarks/events.md, "Start-up and the webhook POST"). The images keep theirs in
# /tmp, the pod's emptyDir.
COMPILE_CACHE=${NODE_COMPILE_CACHE:-$RUN_DIR/compile-cache}
# compiled: `npm run build` first, then each process runs its dist/<process>/main.js, as the
# images do; source: straight from the TypeScript sources through tsx (no build step).
STACK_RUNTIME=${STACK_RUNTIME:-compiled}
# Extra node flags for every process, e.g. STACK_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"
# (node refuses --cpu-prof in NODE_OPTIONS).
STACK_NODE_FLAGS=${STACK_NODE_FLAGS:-}
# How long a process drains after SIGTERM (kit's SHUTDOWN_TIMEOUT_MS, passed on to every process).
SHUTDOWN_MS=${SHUTDOWN_TIMEOUT_MS:-20000}

usage() {
  cat <<TXT
usage: scripts/stack.sh start|stop|status|logs [name]|roll [name…|all]|restart [name…|all]

  start    start Postgres/Redis if stopped, Kafka (scripts/kafka.sh), then each service
           and the gateway as separate processes; waits until each is ready
  stop     stop the processes this script started (by their pid files), then Kafka if
           this script started it
  status   show which processes run, and how often each was restarted
  roll     replace running processes one at a time as a Kubernetes rolling update does
           (all: every one, the gateway last): rebuild (compiled), start the new instance
           on the same ports (SO_REUSEPORT) and wait until it listens on them, then SIGTERM
           the old one, which drains (SHUTDOWN_TIMEOUT_MS) while the new one takes the work
           (docs/deploying.md); STACK_BUILD=0 runs the dist/ there is
  restart  stop, then start, each named process: what roll replaces (nothing serves between)
  targets  print process=metrics-port for each process (what Prometheus scrapes)

Each process runs under a small supervisor that restarts it when it exits (after 1 s, then
2 s, 4 s … up to 30 s; back to 1 s after a run of a minute); its log says so.
  logs     tail the log of one process ($PROCESSES)

Ports: gateway http://127.0.0.1:$GATEWAY_PORT; RPC identity $IDENTITY_PORT, scheduling $SCHEDULING_PORT,
crm-data $CRM_PORT, revenue $REVENUE_PORT, analytics $ANALYTICS_PORT, webhooks $WEBHOOKS_PORT, webhook
delivery worker $DELIVERY_PORT, request-logs $REQUEST_LOGS_PORT; admin planes identity $ADMIN_PORT, crm-data $CRM_ADMIN_PORT, revenue
$REVENUE_ADMIN_PORT, analytics $ANALYTICS_ADMIN_PORT; Prometheus /metrics on $METRICS_BASE_PORT + n
(n: the process's place in "$METRICS_ORDER", gateway 0).
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

PROCESSES="identity scheduling crm-data revenue analytics webhooks webhooks-delivery request-logs gateway"

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
# A new instance of a roll writes to $name.next.* (its stem) until $name.pid names it, which
# the roll writes (with $name.child) at the handover.
supervise() {
  local name=$1 stem=$2; shift 2
  set +e
  local child="" restarts=0 delay=1 started code
  # Only its own pid file goes: the current one may be the instance that replaced it.
  trap '[ "$(cat "$RUN_DIR/$stem.child" 2>/dev/null)" = "$child" ] && rm -f "$RUN_DIR/$stem.child"
    [ -n "$child" ] && kill -TERM "$child" 2>/dev/null && wait "$child"; exit 0' TERM INT
  while :; do
    [ "$(cat "$RUN_DIR/$name.pid" 2>/dev/null)" = "$BASHPID" ] && stem=$name
    started=$(date +%s)
    "$@" >>"$RUN_DIR/$name.log" 2>&1 &
    child=$!
    echo "$child" >"$RUN_DIR/$stem.child"
    wait "$child"
    code=$?
    [ "$(cat "$RUN_DIR/$name.pid" 2>/dev/null)" = "$BASHPID" ] && stem=$name
    restarts=$((restarts + 1))
    [ $(($(date +%s) - started)) -ge 60 ] && delay=1
    echo "$restarts $code $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$RUN_DIR/$stem.restarts"
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
    request-logs) own="$REQUEST_LOGS_PORT" ;;
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
  (trap '' HUP; supervise "$name" "$name" env NODE_COMPILE_CACHE="$COMPILE_CACHE" KAFKA_GROUP_INSTANCE_ID="stack-$name" "$@") </dev/null >/dev/null 2>&1 &
  echo $! >"$RUN_DIR/$name.pid"
  wait_port "$name" "$port"
  echo "$name: ready on port $port (pid $(cat "$RUN_DIR/$name.child"), log $RUN_DIR/$name.log)"
}

stop_one() {
  local name=$1
  # A new instance an interrupted roll left behind, before its handover.
  if [ -f "$RUN_DIR/$name.next.pid" ]; then
    kill "$(cat "$RUN_DIR/$name.next.pid")" 2>/dev/null || true
    rm -f "$RUN_DIR/$name.next.pid" "$RUN_DIR/$name.next.child" "$RUN_DIR/$name.next.restarts"
  fi
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
  rm -f "$RUN_DIR/$name.pid" "$RUN_DIR/$name.child" "$RUN_DIR/$name.restarts" "$RUN_DIR/$name.generation"
}

# The node binary and flags every process runs with, and the runtime checked.
pick_node() {
  # Node 22, as the images run (scripts/stack-node.sh; STACK_NODE picks another).
  node_bin=$(bash scripts/stack-node.sh)
  # The flags the images give every process in NODE_OPTIONS, as this node takes them.
  node_flags=$(bash scripts/node-flags.sh "$node_bin")
  [ -z "$node_flags" ] || echo "node flags: $node_flags (scripts/node-flags.sh)" >&2
  case "$STACK_RUNTIME" in
    compiled | source) ;;
    *) echo "STACK_RUNTIME must be compiled or source, not '$STACK_RUNTIME'" >&2; exit 2 ;;
  esac
}

# dist/ built when compiled; STACK_BUILD=0 runs the dist/ there is (a bench that built it first).
build_dist() {
  [ "$STACK_RUNTIME" = compiled ] && [ "${STACK_BUILD:-1}" != 0 ] || return 0
  echo "building dist/ (npm run build; STACK_RUNTIME=source skips it)…"
  npm run --silent build >"$RUN_DIR/build.log" 2>&1 || { tail -n 30 "$RUN_DIR/build.log" >&2; exit 1; }
}

# The command line that runs a process: its compiled bundle, or its source through tsx.
entry() {
  case "$STACK_RUNTIME" in
    compiled) echo "$node_bin $node_flags $STACK_NODE_FLAGS dist/$1/main.js" ;;
    source) echo "$node_bin $node_flags $STACK_NODE_FLAGS --import tsx $2" ;;
  esac
}
local_url() { echo "http://127.0.0.1:$1"; }

# CMD: the environment and command line of one process; PORT0: the port that says it is up.
command_of() {
  case $1 in
    identity) PORT0=$IDENTITY_PORT; CMD=(PORT="$IDENTITY_PORT" ADMIN_PORT="$ADMIN_PORT" METRICS_PORT="$(metrics_port identity)"
      DATABASE_URL="$PG_URL/${DB_PREFIX}identity" $(entry identity services/identity/src/main.ts)) ;;
    scheduling) PORT0=$SCHEDULING_PORT; CMD=(PORT="$SCHEDULING_PORT" METRICS_PORT="$(metrics_port scheduling)"
      DATABASE_URL="$PG_URL/${DB_PREFIX}scheduling" $(entry scheduling services/scheduling/src/main.ts)) ;;
    crm-data) PORT0=$CRM_PORT; CMD=(PORT="$CRM_PORT" ADMIN_PORT="$CRM_ADMIN_PORT" METRICS_PORT="$(metrics_port crm-data)"
      DATABASE_URL="$PG_URL/${DB_PREFIX}crm" $(entry crm-data services/crm-data/src/main.ts)) ;;
    revenue) PORT0=$REVENUE_PORT; CMD=(PORT="$REVENUE_PORT" ADMIN_PORT="$REVENUE_ADMIN_PORT" METRICS_PORT="$(metrics_port revenue)"
      DATABASE_URL="$PG_URL/${DB_PREFIX}revenue" CRM_URL="$(local_url "$CRM_PORT")"
      IDENTITY_URL="$(local_url "$IDENTITY_PORT")" $(entry revenue services/revenue/src/main.ts)) ;;
    analytics) PORT0=$ANALYTICS_PORT; CMD=(PORT="$ANALYTICS_PORT" ADMIN_PORT="$ANALYTICS_ADMIN_PORT"
      METRICS_PORT="$(metrics_port analytics)" DATABASE_URL="$PG_URL/${DB_PREFIX}analytics"
      CRM_URL="$(local_url "$CRM_PORT")" $(entry analytics services/analytics/src/main.ts)) ;;
    webhooks) PORT0=$WEBHOOKS_PORT; CMD=(PORT="$WEBHOOKS_PORT" METRICS_PORT="$(metrics_port webhooks)"
      DATABASE_URL="$PG_URL/${DB_PREFIX}webhooks" $(entry webhooks services/webhooks/src/main.ts)) ;;
    webhooks-delivery) PORT0=$DELIVERY_PORT; CMD=(DELIVERY_PORT="$DELIVERY_PORT" METRICS_PORT="$(metrics_port webhooks-delivery)"
      DATABASE_URL="$PG_URL/${DB_PREFIX}webhooks" $(entry webhooks-delivery services/webhooks/src/delivery-main.ts)) ;;
    request-logs) PORT0=$REQUEST_LOGS_PORT; CMD=(PORT="$REQUEST_LOGS_PORT" METRICS_PORT="$(metrics_port request-logs)"
      DATABASE_URL="$PG_URL/${DB_PREFIX}request_logs" $(entry request-logs services/request-logs/src/main.ts)) ;;
    gateway) PORT0=$GATEWAY_PORT; CMD=(PORT="$GATEWAY_PORT" METRICS_PORT="$(metrics_port gateway)"
      IDENTITY_URL="$(local_url "$IDENTITY_PORT")" SCHEDULING_URL="$(local_url "$SCHEDULING_PORT")"
      CRM_URL="$(local_url "$CRM_PORT")" REVENUE_URL="$(local_url "$REVENUE_PORT")"
      ANALYTICS_URL="$(local_url "$ANALYTICS_PORT")" WEBHOOKS_URL="$(local_url "$WEBHOOKS_PORT")"
      REQUEST_LOGS_URL="$(local_url "$REQUEST_LOGS_PORT")" $(entry gateway gateway/src/main.ts)) ;;
    *) echo "no process '$1'; the processes: $PROCESSES" >&2; exit 2 ;;
  esac
}

# The processes a roll or restart names, in the order given; all (or none): every one in start
# order, the gateway last.
targets() {
  if [ $# -eq 0 ] || [ "$1" = all ]; then echo "$PROCESSES"; return 0; fi
  local n
  for n in "$@"; do
    case " $PROCESSES " in
      *" $n "*) echo "$n" ;;
      *) echo "no process '$n'; the processes: $PROCESSES" >&2; exit 2 ;;
    esac
  done
}

# Whether process `pid` itself listens on every one of `ports` (ss shows each listener's owner).
listens_on() {
  local pid=$1 port; shift
  for port in "$@"; do
    ss -Hltnp "sport = :$port" 2>/dev/null | grep -q "pid=$pid," || return 1
  done
}

# A rolling update of one process: the new instance starts beside the old one, on the same ports
# (SO_REUSEPORT, kit's shared-port.ts) and with a Kafka instance id of its own; once it listens on
# all of them it becomes the current one, and only then is the old one sent SIGTERM: it stops
# accepting, answers what is in flight with `Connection: close`, leaves its consumer groups and
# flushes its outbox round, while the new one serves (docs/deploying.md).
roll_one() {
  local name=$1 old_sup old_child gen new_sup new_child own t0 waited
  running "$name" || { echo "$name: not running (scripts/stack.sh start first)" >&2; return 1; }
  old_sup=$(cat "$RUN_DIR/$name.pid")
  old_child=$(cat "$RUN_DIR/$name.child" 2>/dev/null || true)
  gen=$(($(cat "$RUN_DIR/$name.generation" 2>/dev/null || echo 0) + 1))
  command_of "$name"
  # Its RPC (or HTTP) port and admin plane; /metrics is not waited for (a scrape may miss one).
  own=$(ports_of "$name"); own=${own% *}
  rm -f "$RUN_DIR/$name.next.child" "$RUN_DIR/$name.next.restarts"
  t0=$(date +%s.%N)
  (trap '' HUP; supervise "$name" "$name.next" env NODE_COMPILE_CACHE="$COMPILE_CACHE" KAFKA_GROUP_INSTANCE_ID="stack-$name-$gen" "${CMD[@]}") </dev/null >/dev/null 2>&1 &
  new_sup=$!
  # Known to `stop` until the handover, should the roll itself be interrupted.
  echo "$new_sup" >"$RUN_DIR/$name.next.pid"
  for _ in $(seq 1 480); do
    new_child=$(cat "$RUN_DIR/$name.next.child" 2>/dev/null || true)
    if [ -f "$RUN_DIR/$name.next.restarts" ] || ! alive "$new_sup"; then
      echo "$name: the new instance exited while starting; the old one (pid $old_child) keeps serving. Last log lines:" >&2
      tail -n 30 "$RUN_DIR/$name.log" >&2
      kill "$new_sup" 2>/dev/null; rm -f "$RUN_DIR/$name.next.pid"
      return 1
    fi
    # shellcheck disable=SC2086
    [ -n "$new_child" ] && listens_on "$new_child" $own && break
    sleep 0.25
  done
  # shellcheck disable=SC2086
  if ! listens_on "$new_child" $own; then
    echo "$name: the new instance did not listen on $own within 120 s; the old one keeps serving" >&2
    kill "$new_sup" 2>/dev/null; rm -f "$RUN_DIR/$name.next.pid"
    return 1
  fi
  echo "$name: new instance ready (pid $new_child, $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s); draining pid $old_child"
  # The new one becomes the current (its pid files), then the old one drains and exits.
  echo "$new_child" >"$RUN_DIR/$name.child"
  echo "$new_sup" >"$RUN_DIR/$name.pid"
  rm -f "$RUN_DIR/$name.restarts" "$RUN_DIR/$name.next.pid" "$RUN_DIR/$name.next.child" "$RUN_DIR/$name.next.restarts"
  echo "$gen" >"$RUN_DIR/$name.generation"
  t0=$(date +%s.%N)
  kill -TERM "$old_sup" 2>/dev/null
  for _ in $(seq 1 $((SHUTDOWN_MS / 250 + 40))); do alive "$old_sup" || break; sleep 0.25; done
  if alive "$old_sup"; then
    [ -n "$old_child" ] && kill -9 "$old_child" 2>/dev/null
    kill -9 "$old_sup" 2>/dev/null
    echo "$name: the old instance did not exit; killed" >&2
  fi
  waited=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}")
  echo "$name: rolled (pid $old_child drained and exited in $waited s; now pid $new_child)"
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
    bash scripts/observability.sh targets stack $(scrape_targets)
    echo "metrics: Prometheus http://127.0.0.1:${PROMETHEUS_PORT:-9090}/targets scrapes every process"
  fi
}

scrape_targets() {
  local n
  for n in $METRICS_ORDER; do printf '%s=%s ' "$n" "$(metrics_port "$n")"; done
  echo
}

case "${1:-}" in
  start)
    mkdir -p "$RUN_DIR"
    refuse_taken_ports
    pick_node
    bash scripts/infra.sh up
    bash scripts/kafka.sh start --mark "$RUN_DIR/kafka.started-by-stack"
    observability
    build_dist
    for n in $PROCESSES; do
      command_of "$n"
      launch "$n" "$PORT0" "${CMD[@]}"
    done
    echo
    echo "Gateway: http://127.0.0.1:$GATEWAY_PORT/api/v1alpha1  (docs: http://127.0.0.1:$GATEWAY_PORT/docs)"
    echo "Sandbox keys: npx platform sandbox keys --admin-url http://127.0.0.1:$ADMIN_PORT"
    ;;
  stop)
    for n in gateway request-logs webhooks-delivery webhooks analytics revenue crm-data scheduling identity; do stop_one "$n"; done
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
  roll)
    names=$(targets "${@:2}")
    for n in $names; do running "$n" || { echo "$n: not running (scripts/stack.sh start first)" >&2; exit 1; }; done
    pick_node
    observability
    build_dist
    if [ "$(cat /proc/sys/net/ipv4/tcp_migrate_req 2>/dev/null || echo 1)" = 0 ]; then
      echo "note: net.ipv4.tcp_migrate_req is 0: a connection the kernel queued for an old instance in the instant" \
        "it closes its port is reset instead of handed to the new one (sysctl -w net.ipv4.tcp_migrate_req=1; docs/deploying.md)" >&2
    fi
    for n in $names; do roll_one "$n" || exit 1; done
    ;;
  restart)
    names=$(targets "${@:2}")
    pick_node
    observability
    build_dist
    for n in $names; do
      stop_one "$n"
      command_of "$n"
      launch "$n" "$PORT0" "${CMD[@]}"
    done
    ;;
  targets) scrape_targets ;;
  logs) tail -n 100 -f "$RUN_DIR/${2:?name: one of $PROCESSES}.log" ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
