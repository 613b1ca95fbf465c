#!/usr/bin/env bash
# The Prometheus rules of deploy/prometheus, checked as CI does: promtool check rules (syntax,
# PromQL), promtool test rules (each alert fires on a synthetic burn or failure and stays silent
# on a normal series), and every alert's runbook_url names a page under docs/runbooks/.
# promtool comes with Debian's prometheus package (installed with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v promtool >/dev/null || bash scripts/observability.sh install
promtool check rules deploy/prometheus/rules/*.yml
promtool test rules deploy/prometheus/tests/*.test.yml
missing=0
for rule_file in deploy/prometheus/rules/*.yml; do
  alerts=$(grep -c '^ *- alert:' "$rule_file" || true)
  links=$(grep -c '^ *runbook_url: docs/runbooks/' "$rule_file" || true)
  if [ "$alerts" != "$links" ]; then
    echo "$rule_file: $alerts alerts but $links runbook_url annotations" >&2
    missing=1
  fi
  for page in $(sed -n 's/^ *runbook_url: //p' "$rule_file" | sort -u); do
    [ -f "$page" ] || { echo "$rule_file: runbook $page does not exist" >&2; missing=1; }
  done
done
[ "$missing" -eq 0 ] || exit 1
echo "runbooks: every alert links an existing page under docs/runbooks/"
