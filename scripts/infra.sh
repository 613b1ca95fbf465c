#!/usr/bin/env bash
# Makes sure the machine's PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379) answer,
# starting them with the machine's own service commands when they are stopped.
set -euo pipefail

usage() {
  cat <<'TXT'
usage: scripts/infra.sh up|status

  up       start PostgreSQL and Redis if they are not answering, then wait for them
  status   report whether each answers (exit 1 if one does not)
TXT
}

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432; }
redis_up() { [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = "PONG" ]; }

wait_for() {
  local name=$1 check=$2
  for _ in $(seq 1 60); do
    if $check; then echo "$name: ready"; return 0; fi
    sleep 0.5
  done
  echo "$name: not ready after 30 s" >&2
  return 1
}

case "${1:-}" in
  up)
    if pg_up; then echo "postgres: already running"; else
      echo "postgres: starting"
      pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start
      wait_for postgres pg_up
    fi
    if redis_up; then echo "redis: already running"; else
      echo "redis: starting"
      mkdir -p /var/lib/redis /var/log/redis
      redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
        --dir /var/lib/redis --logfile /var/log/redis/ci.log
      wait_for redis redis_up
    fi
    ;;
  status)
    ok=0
    if pg_up; then echo "postgres: up"; else echo "postgres: down"; ok=1; fi
    if redis_up; then echo "redis: up"; else echo "redis: down"; ok=1; fi
    exit $ok
    ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
