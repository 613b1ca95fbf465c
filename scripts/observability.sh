#!/usr/bin/env bash
# The observability backends for development and the infra tests, without Docker, started
# like scripts/kafka.sh: Zipkin (traces; the server's exec jar from Maven Central, run on the
# machine's Java 17, in-memory storage) and Prometheus (metrics and the SLO rules of
# deploy/prometheus; Debian's `prometheus` package, installed with apt-get when missing, its
# binary run directly with a config and data dir of its own, never the Debian service).
# Prometheus finds what to scrape in file_sd target files: `npm run stack -- start` writes the
# stack's (scripts/stack.sh targets), a test writes its own with `targets NAME name=port ...`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

ZIPKIN_VERSION=3.5.1
DEPENDENCY_PLUGIN_VERSION=3.6.1
ZIPKIN_PORT="${ZIPKIN_PORT:-9411}"
PROMETHEUS_PORT="${PROMETHEUS_PORT:-9090}"
SCRAPE_INTERVAL="${PROMETHEUS_SCRAPE_INTERVAL:-15s}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/platform-observability"
JAR_DIR="${CACHE_ROOT}/zipkin-${ZIPKIN_VERSION}"
JAR="${JAR_DIR}/zipkin-server-${ZIPKIN_VERSION}-exec.jar"
# Keyed by the two ports, like Kafka's data dir: every clone sees the same pid files.
STATE_DIR="${OBSERVABILITY_DIR:-${CACHE_ROOT}/run/${ZIPKIN_PORT}-${PROMETHEUS_PORT}}"
START_TIMEOUT="${OBSERVABILITY_START_TIMEOUT:-90}"

usage() {
  cat <<EOF
Usage: scripts/observability.sh start [--mark FILE]|stop [--if-marked FILE]|status [zipkin|prometheus]
                                |targets NAME [process=port ...]|targets-dir|install|logs zipkin|prometheus|--help

Runs Zipkin ${ZIPKIN_VERSION} (traces) on 127.0.0.1:${ZIPKIN_PORT} and Prometheus (metrics, SLO rules)
on 127.0.0.1:${PROMETHEUS_PORT}, without Docker.

  start        fetch the Zipkin jar (once, Maven Central), install prometheus with apt-get when
               missing, start both in the background and wait until they answer; a Prometheus
               already running reloads the rules of deploy/prometheus/rules. Writes the stack's
               scrape targets (stack.sh targets).
               --mark FILE: creates FILE when this call started something
  stop         stop what this state dir's pid files name (only processes this script started)
               --if-marked FILE: only when FILE exists (then removes it)
  status       exit 0 when both run (or the one named), 1 otherwise
  targets      NAME process=port ...: Prometheus scrapes 127.0.0.1:port/metrics as job=process
               (file targets/NAME.json, picked up within 5 s); NAME alone removes the file
  targets-dir  print the directory of the target files
  install      install Debian's prometheus package (prometheus, promtool) when missing
  logs         print one backend's log

Once they run, \`npm run stack -- start\` sends every process's spans to Zipkin
(OTEL_TRACES_EXPORTER=zipkin) and Prometheus scrapes every process's /metrics.
UIs: Zipkin http://127.0.0.1:${ZIPKIN_PORT}/zipkin/  Prometheus http://127.0.0.1:${PROMETHEUS_PORT}/

Environment:
  ZIPKIN_PORT                 Zipkin's port                 (default 9411, now ${ZIPKIN_PORT})
  PROMETHEUS_PORT             Prometheus's port             (default 9090, now ${PROMETHEUS_PORT})
  PROMETHEUS_SCRAPE_INTERVAL  scrape and rule interval      (default 15s, now ${SCRAPE_INTERVAL})
  OBSERVABILITY_DIR           config, logs, pids, TSDB      (now ${STATE_DIR})
  OBSERVABILITY_START_TIMEOUT seconds to wait for each      (default 90)
  XDG_CACHE_HOME              jar cache root                (jar in ${JAR_DIR})
EOF
}

log() { printf 'observability.sh: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

alive() {
  kill -0 "$1" 2>/dev/null || return 1
  local state
  state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || echo Z)"
  [[ "${state}" != "Z" ]]
}

# The pid of a backend this script started, if it still runs (a recycled pid does not count).
running_pid() {
  local name=$1 pid pattern
  [[ -f "${STATE_DIR}/$name.pid" ]] || return 1
  pid="$(cat "${STATE_DIR}/$name.pid")"
  [[ "${pid}" =~ ^[0-9]+$ ]] && alive "${pid}" || return 1
  case $name in
    zipkin) pattern='zipkin-server' ;;
    prometheus) pattern='prometheus' ;;
  esac
  grep -q "${pattern}" "/proc/${pid}/cmdline" 2>/dev/null || return 1
  echo "${pid}"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

fetch_zipkin() {
  [[ -f "${JAR_DIR}/.complete" ]] && return
  command -v mvn >/dev/null || die "Maven (mvn) is required to fetch the Zipkin server jar"
  log "fetching io.zipkin:zipkin-server:${ZIPKIN_VERSION}:exec from Maven Central into ${JAR_DIR}"
  mkdir -p "${JAR_DIR}"
  if ! (cd "${JAR_DIR}" && mvn -q -B -Dstyle.color=never \
    "org.apache.maven.plugins:maven-dependency-plugin:${DEPENDENCY_PLUGIN_VERSION}:copy" \
    -Dartifact="io.zipkin:zipkin-server:${ZIPKIN_VERSION}:jar:exec" -DoutputDirectory="${JAR_DIR}") \
    >"${JAR_DIR}/mvn.log" 2>&1; then
    cat "${JAR_DIR}/mvn.log" >&2
    die "Maven could not fetch the Zipkin server jar (output above)"
  fi
  [[ -f "${JAR}" ]] || die "no ${JAR} after the download"
  touch "${JAR_DIR}/.complete"
}

install_prometheus() {
  command -v prometheus >/dev/null && command -v promtool >/dev/null && return
  command -v apt-get >/dev/null || die "prometheus is missing and there is no apt-get to install it"
  local sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  log "installing Debian's prometheus package (apt-get)"
  # The package's own service is not used (and has no init to start it in a container).
  $sudo apt-get update -qq >"${STATE_DIR}/apt.log" 2>&1 || true
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus \
    >>"${STATE_DIR}/apt.log" 2>&1 || { cat "${STATE_DIR}/apt.log" >&2; die "apt-get install prometheus failed"; }
}

# Waits for url to answer 200; gives up when the process dies or after START_TIMEOUT.
wait_http() {
  local name=$1 pid=$2 url=$3 waited=0
  until curl -fsS -o /dev/null "${url}" 2>/dev/null; do
    if ! alive "${pid}"; then
      rm -f "${STATE_DIR}/$name.pid"
      tail -n 30 "${STATE_DIR}/$name.log" >&2 || true
      die "$name exited during start-up (log above, full log ${STATE_DIR}/$name.log)"
    fi
    if ((waited >= START_TIMEOUT * 2)); then
      tail -n 30 "${STATE_DIR}/$name.log" >&2 || true
      die "$name not ready after ${START_TIMEOUT}s; it still runs as pid ${pid}, use 'stop'"
    fi
    if ((waited > 0 && waited % 20 == 0)); then log "waiting for $name ($((waited / 2))s)"; fi
    sleep 0.5
    waited=$((waited + 1))
  done
}

start_zipkin() {
  local pid
  if pid="$(running_pid zipkin)"; then
    log "zipkin already running (pid ${pid}) on 127.0.0.1:${ZIPKIN_PORT}"
    return
  fi
  command -v java >/dev/null || die "Java 17 is required for Zipkin"
  port_in_use "${ZIPKIN_PORT}" && die "port ${ZIPKIN_PORT} is already in use by another process"
  fetch_zipkin
  log "starting zipkin on 127.0.0.1:${ZIPKIN_PORT} (in-memory storage)"
  : >"${STATE_DIR}/zipkin.log"
  # In-memory storage, capped; bound to loopback (Armeria's port list), no self-tracing.
  STORAGE_TYPE=mem MEM_MAX_SPANS="${ZIPKIN_MAX_SPANS:-200000}" SELF_TRACING_ENABLED=false \
    nohup java -Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
    -jar "${JAR}" --armeria.ports[0].ip=127.0.0.1 --armeria.ports[0].port="${ZIPKIN_PORT}" \
    --armeria.ports[0].protocols=http --logging.level.root=WARN \
    >>"${STATE_DIR}/zipkin.log" 2>&1 </dev/null &
  pid=$!
  echo "${pid}" >"${STATE_DIR}/zipkin.pid"
  STARTED=1
  wait_http zipkin "${pid}" "http://127.0.0.1:${ZIPKIN_PORT}/health"
  log "zipkin ready: http://127.0.0.1:${ZIPKIN_PORT}/zipkin/ (pid ${pid})"
}

write_prometheus_config() {
  mkdir -p "${STATE_DIR}/targets" "${STATE_DIR}/rules"
  # The repository's rules, copied so a checkout moved or deleted later does not break reloads.
  cp "${ROOT}"/deploy/prometheus/rules/*.yml "${STATE_DIR}/rules/"
  cat >"${STATE_DIR}/prometheus.yml" <<EOF
# Generated by scripts/observability.sh; edits are overwritten at the next start.
global:
  scrape_interval: ${SCRAPE_INTERVAL}
  evaluation_interval: ${SCRAPE_INTERVAL}
rule_files:
  - ${STATE_DIR}/rules/*.yml
scrape_configs:
  - job_name: platform
    # Each target file sets job=<process> (the process name, as the Kubernetes PodMonitor does).
    file_sd_configs:
      - files: ["${STATE_DIR}/targets/*.json"]
        refresh_interval: 5s
  - job_name: prometheus
    static_configs:
      - targets: ["127.0.0.1:${PROMETHEUS_PORT}"]
EOF
}

start_prometheus() {
  local pid
  if pid="$(running_pid prometheus)"; then
    # The checkout's current rules: a running Prometheus reloads them (--web.enable-lifecycle).
    write_prometheus_config
    curl -fsS -X POST -o /dev/null "http://127.0.0.1:${PROMETHEUS_PORT}/-/reload" ||
      log "warning: prometheus did not reload its configuration"
    log "prometheus already running (pid ${pid}) on 127.0.0.1:${PROMETHEUS_PORT}; rules reloaded"
    return
  fi
  install_prometheus
  port_in_use "${PROMETHEUS_PORT}" && die "port ${PROMETHEUS_PORT} is already in use by another process"
  write_prometheus_config
  promtool check config "${STATE_DIR}/prometheus.yml" >"${STATE_DIR}/check.log" 2>&1 ||
    { cat "${STATE_DIR}/check.log" >&2; die "the generated configuration does not pass promtool check config"; }
  log "starting prometheus on 127.0.0.1:${PROMETHEUS_PORT} (scrape every ${SCRAPE_INTERVAL})"
  : >"${STATE_DIR}/prometheus.log"
  nohup prometheus --config.file="${STATE_DIR}/prometheus.yml" --storage.tsdb.path="${STATE_DIR}/tsdb" \
    --storage.tsdb.retention.time=2d --web.listen-address="127.0.0.1:${PROMETHEUS_PORT}" \
    --web.enable-lifecycle >>"${STATE_DIR}/prometheus.log" 2>&1 </dev/null &
  pid=$!
  echo "${pid}" >"${STATE_DIR}/prometheus.pid"
  STARTED=1
  wait_http prometheus "${pid}" "http://127.0.0.1:${PROMETHEUS_PORT}/-/ready"
  log "prometheus ready: http://127.0.0.1:${PROMETHEUS_PORT}/ (pid ${pid})"
}

# targets NAME [process=port ...]: one file_sd file; no pairs removes it.
cmd_targets() {
  local name=${1:?targets NAME [process=port ...]} file json="" pair
  shift
  [[ "${name}" =~ ^[A-Za-z0-9._-]+$ ]] || die "a target file name is letters, digits, . _ -"
  mkdir -p "${STATE_DIR}/targets"
  file="${STATE_DIR}/targets/${name}.json"
  if [[ $# -eq 0 ]]; then
    rm -f "${file}"
    return
  fi
  for pair in "$@"; do
    [[ "${pair}" =~ ^([a-z0-9-]+)=([0-9]+)$ ]] || die "not process=port: ${pair}"
    json="${json:+${json},}{\"targets\":[\"127.0.0.1:${BASH_REMATCH[2]}\"],\"labels\":{\"job\":\"${BASH_REMATCH[1]}\",\"source\":\"${name}\"}}"
  done
  # Written aside and renamed: Prometheus never reads half a file.
  printf '[%s]\n' "${json}" >"${file}.tmp"
  mv "${file}.tmp" "${file}"
}

stop_one() {
  local name=$1 pid
  if ! pid="$(running_pid "$name")"; then
    rm -f "${STATE_DIR}/$name.pid"
    log "$name not running"
    return
  fi
  log "stopping $name (pid ${pid})"
  kill -TERM "${pid}" 2>/dev/null || true
  for _ in $(seq 1 150); do alive "${pid}" || break; sleep 0.1; done
  if alive "${pid}"; then kill -KILL "${pid}" 2>/dev/null || true; fi
  rm -f "${STATE_DIR}/$name.pid"
  log "$name stopped"
}

cmd_status() {
  local code=0 name pid
  for name in ${1:-zipkin prometheus}; do
    if pid="$(running_pid "$name")"; then
      case $name in
        zipkin) echo "zipkin: running (pid ${pid}) on http://127.0.0.1:${ZIPKIN_PORT}" ;;
        prometheus) echo "prometheus: running (pid ${pid}) on http://127.0.0.1:${PROMETHEUS_PORT}" ;;
      esac
    else
      echo "$name: not running"
      code=1
    fi
  done
  return "${code}"
}

MARK=""
if [[ $# -ge 3 && ("$1 $2" == "start --mark" || "$1 $2" == "stop --if-marked") ]]; then MARK="$3"; fi
mkdir -p "${STATE_DIR}"
STATE_DIR="$(cd "${STATE_DIR}" && pwd)"
STARTED=0
case "${1:-}" in
  start)
    [[ $# -eq 1 || -n "${MARK}" ]] || { usage >&2; exit 2; }
    # A mark as soon as something runs: a start that then fails still leaves it for the caller to stop.
    trap '[[ -n "${MARK}" && ${STARTED} -eq 1 ]] && : >"${MARK}"' EXIT
    start_zipkin
    start_prometheus
    # shellcheck disable=SC2046
    # The default stack's ports, unless a running stack wrote its own.
    [[ -f "${STATE_DIR}/targets/stack.json" ]] || cmd_targets stack $(bash scripts/stack.sh targets)
    ;;
  stop)
    if [[ -n "${MARK}" && ! -f "${MARK}" ]]; then
      log "left running: not started by this caller (no ${MARK})"
      exit 0
    fi
    stop_one prometheus
    stop_one zipkin
    [[ -z "${MARK}" ]] || rm -f "${MARK}"
    ;;
  status)
    case "${2:-}" in "" | zipkin | prometheus) ;; *) usage >&2; exit 2 ;; esac
    cmd_status "${2:-}"
    ;;
  targets) shift && cmd_targets "$@" ;;
  targets-dir) echo "${STATE_DIR}/targets" ;;
  install) install_prometheus ;;
  logs)
    case "${2:-}" in zipkin | prometheus) cat "${STATE_DIR}/$2.log" ;; *) usage >&2; exit 2 ;; esac
    ;;
  -h | --help | help) usage ;;
  *)
    usage >&2
    exit 2
    ;;
esac
