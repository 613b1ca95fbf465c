#!/usr/bin/env bash
# A single-node Apache Kafka (KRaft, broker+controller) for development and the infra
# tests, without Docker: the broker jars come from Maven Central through Maven and run on
# the machine's Java 17. Several independent brokers can run side by side by giving each
# its own KAFKA_PORT, KAFKA_CONTROLLER_PORT and KAFKA_DATA_DIR.
set -euo pipefail

KAFKA_VERSION=3.9.1
SLF4J_VERSION=1.7.36
# Pinned so a fresh machine resolves the same plugin as CI, not whatever Maven defaults to.
DEPENDENCY_PLUGIN_VERSION=3.6.1

PORT="${KAFKA_PORT:-19092}"
CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-19093}"
# Keyed by port in the user's cache, not the checkout: every clone (CI's included) then sees
# the same pid file for the same port and never starts a second broker on it.
DATA_DIR="${KAFKA_DATA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-kafka/brokers/${PORT}}"
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/platform-kafka/${KAFKA_VERSION}"
LIB_DIR="${CACHE_DIR}/lib"
START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"

usage() {
  cat <<EOF
Usage: scripts/kafka.sh start [--mark FILE]|stop [--if-marked FILE]|status|logs|--help

Runs Apache Kafka ${KAFKA_VERSION} (single-node KRaft) on 127.0.0.1 without Docker.

  start    fetch the jars (once), format storage (once), start in the background and
           wait until the broker is ready; does nothing if it is already running
           --mark FILE: creates FILE when this call starts the broker (not when it was running)
  stop     stop the broker started from this data dir (by its pid file)
           --if-marked FILE: only when FILE exists (then removes it), so a caller stops
           only a broker it started itself (npm run stack, the events bench, CI)
  status   exit 0 when the broker is running, 1 otherwise
  logs     print the broker log (tail -f when standard output is a terminal)

Environment:
  KAFKA_PORT             broker port                   (default 19092, now ${PORT})
  KAFKA_CONTROLLER_PORT  KRaft controller port         (default 19093, now ${CONTROLLER_PORT})
  KAFKA_DATA_DIR         config, logs, pid, data       (default ~/.cache/platform-kafka/brokers/<port>, now ${DATA_DIR})
  KAFKA_START_TIMEOUT    seconds to wait for readiness (default 90)
  XDG_CACHE_HOME         jar cache root                (jars in ${LIB_DIR})
EOF
}

log() { printf 'kafka.sh[%s]: %s\n' "${PORT}" "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

resolve_paths() {
  # Absolute paths: the broker runs under nohup and must not depend on the caller's cwd.
  mkdir -p "${DATA_DIR}"
  DATA_DIR="$(cd "${DATA_DIR}" && pwd)"
  PID_FILE="${DATA_DIR}/kafka.pid"
  LOG_FILE="${DATA_DIR}/kafka.log"
  CONFIG_FILE="${DATA_DIR}/server.properties"
  LOG_DIRS="${DATA_DIR}/data"
}

# Alive and not a zombie: an unreaped broker (no init reaping in some containers) is gone.
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  local state
  state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || echo Z)"
  [[ "${state}" != "Z" ]]
}

running_pid() {
  [[ -f "${PID_FILE}" ]] || return 1
  local pid
  pid="$(cat "${PID_FILE}")"
  [[ "${pid}" =~ ^[0-9]+$ ]] || return 1
  alive "${pid}" || return 1
  # A stale pid file may point at a recycled pid; only a Kafka process counts as ours.
  grep -q 'kafka.Kafka' "/proc/${pid}/cmdline" 2>/dev/null || return 1
  echo "${pid}"
}

fetch_jars() {
  if [[ -f "${CACHE_DIR}/.complete" ]]; then return; fi
  command -v mvn >/dev/null || die "Maven (mvn) is required to fetch the Kafka jars"
  log "fetching Kafka ${KAFKA_VERSION} jars from Maven Central into ${LIB_DIR}"
  mkdir -p "${CACHE_DIR}"
  cat >"${CACHE_DIR}/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>platform.local</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>${KAFKA_VERSION}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>${KAFKA_VERSION}</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-reload4j</artifactId>
      <version>${SLF4J_VERSION}</version>
    </dependency>
  </dependencies>
</project>
EOF
  rm -rf "${LIB_DIR}"
  if ! (cd "${CACHE_DIR}" && mvn -q -B -Dstyle.color=never \
    "org.apache.maven.plugins:maven-dependency-plugin:${DEPENDENCY_PLUGIN_VERSION}:copy-dependencies" \
    -DincludeScope=runtime -DoutputDirectory="${LIB_DIR}") >"${CACHE_DIR}/mvn.log" 2>&1; then
    cat "${CACHE_DIR}/mvn.log" >&2
    die "Maven could not fetch the Kafka jars (output above)"
  fi
  # The marker makes a half-finished download (interrupted mvn) retry instead of counting as cached.
  touch "${CACHE_DIR}/.complete"
}

write_config() {
  mkdir -p "${LOG_DIRS}"
  cat >"${CONFIG_FILE}" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${CONTROLLER_PORT}
listeners=PLAINTEXT://127.0.0.1:${PORT},CONTROLLER://127.0.0.1:${CONTROLLER_PORT}
advertised.listeners=PLAINTEXT://127.0.0.1:${PORT}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=${LOG_DIRS}
num.partitions=3
auto.create.topics.enable=true
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
default.replication.factor=1
min.insync.replicas=1
group.initial.rebalance.delay.ms=0
log.retention.hours=24
EOF
  # reload4j needs a config of its own or it prints warnings and logs nothing useful.
  cat >"${DATA_DIR}/log4j.properties" <<EOF
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
EOF
}

format_storage() {
  if [[ -f "${LOG_DIRS}/meta.properties" ]]; then return; fi
  local cluster_id
  cluster_id="$(java -cp "${LIB_DIR}/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n1)"
  [[ -n "${cluster_id}" ]] || die "could not generate a cluster id"
  log "formatting storage in ${LOG_DIRS} (cluster ${cluster_id})"
  java -Dlog4j.configuration="file:${DATA_DIR}/log4j.properties" -cp "${LIB_DIR}/*" \
    kafka.tools.StorageTool format -t "${cluster_id}" -c "${CONFIG_FILE}" >>"${LOG_FILE}" 2>&1 ||
    die "formatting storage failed; see ${LOG_FILE}"
}

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

cmd_start() {
  local pid
  if pid="$(running_pid)"; then
    log "already running (pid ${pid}) on 127.0.0.1:${PORT}"
    return 0
  fi
  command -v java >/dev/null || die "Java 17 is required"
  for p in "${PORT}" "${CONTROLLER_PORT}"; do
    if port_in_use "${p}"; then die "port ${p} is already in use by another process"; fi
  done
  fetch_jars
  write_config
  format_storage
  # The log file is the readiness signal, so each start begins a fresh one.
  : >"${LOG_FILE}"
  log "starting on 127.0.0.1:${PORT} (controller ${CONTROLLER_PORT}, data ${DATA_DIR})"
  nohup java -Xmx512m -Xms256m -XX:+UseG1GC -Djava.awt.headless=true \
    -Dlog4j.configuration="file:${DATA_DIR}/log4j.properties" \
    -cp "${LIB_DIR}/*" kafka.Kafka "${CONFIG_FILE}" >>"${LOG_FILE}" 2>&1 </dev/null &
  pid=$!
  echo "${pid}" >"${PID_FILE}"
  # Marked as soon as it runs: a start that times out still leaves a broker for the caller to stop.
  if [[ -n "${MARK}" ]]; then : >"${MARK}"; fi
  local waited=0
  while ! grep -q 'Kafka Server started' "${LOG_FILE}" 2>/dev/null; do
    if ! alive "${pid}"; then
      rm -f "${PID_FILE}"
      tail -n 40 "${LOG_FILE}" >&2 || true
      die "the broker exited during start-up (log above, full log in ${LOG_FILE})"
    fi
    if ((waited >= START_TIMEOUT)); then
      tail -n 40 "${LOG_FILE}" >&2 || true
      die "not ready after ${START_TIMEOUT}s (log above, full log in ${LOG_FILE}); it is still running as pid ${pid}, use 'stop'"
    fi
    if ((waited > 0 && waited % 10 == 0)); then log "waiting for the broker (${waited}s)"; fi
    sleep 1
    waited=$((waited + 1))
  done
  log "ready on 127.0.0.1:${PORT} (pid ${pid})"
}

cmd_stop() {
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "${PID_FILE}"
    log "not running"
    return 0
  fi
  log "stopping pid ${pid}"
  kill -TERM "${pid}" 2>/dev/null || true
  local waited=0
  while alive "${pid}"; do
    if ((waited == 300)); then
      # 30 s of graceful shutdown is plenty for a dev broker; the data is not precious.
      log "still running after 30s, killing pid ${pid}"
      kill -KILL "${pid}" 2>/dev/null || true
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  rm -f "${PID_FILE}"
  log "stopped"
}

cmd_status() {
  local pid
  if pid="$(running_pid)"; then
    echo "running (pid ${pid}) on 127.0.0.1:${PORT}"
    return 0
  fi
  echo "not running (port ${PORT}, data ${DATA_DIR})"
  return 1
}

cmd_logs() {
  [[ -f "${LOG_FILE}" ]] || die "no log yet at ${LOG_FILE}"
  if [[ -t 1 ]]; then tail -n 100 -f "${LOG_FILE}"; else cat "${LOG_FILE}"; fi
}

# The one home of "stop Kafka only if you started it": start --mark FILE, stop --if-marked FILE.
MARK=""
if [[ $# -ge 3 && ( "$1 $2" == "start --mark" || "$1 $2" == "stop --if-marked" ) ]]; then MARK="$3"; fi
if [[ $# -gt 1 && -z "${MARK}" ]]; then
  usage >&2
  exit 2
fi

case "${1:-}" in
start) resolve_paths && cmd_start ;;
stop)
  resolve_paths
  if [[ -z "${MARK}" ]]; then
    cmd_stop
  elif [[ -f "${MARK}" ]]; then
    cmd_stop
    rm -f "${MARK}"
  else
    log "left running: not started by this caller (no ${MARK})"
  fi
  ;;
status) resolve_paths && cmd_status ;;
logs) resolve_paths && cmd_logs ;;
-h | --help | help) usage ;;
*)
  usage >&2
  exit 2
  ;;
esac
