#!/usr/bin/env bash
# Prints the path of Debian's chromium, which the console's browser tests drive through
# playwright-core (no browser download). When it is missing it is installed with apt-get
# (as root, or with sudo), like scripts/observability.sh installs prometheus.
# Usage: bash scripts/chromium.sh [--help]     progress on stderr, the path alone on stdout
set -euo pipefail

if [[ ${1:-} == "--help" || ${1:-} == "-h" ]]; then
  cat <<'HELP'
Usage: scripts/chromium.sh

Prints the path of the chromium binary (CHROMIUM_PATH when set, else /usr/bin/chromium),
installing Debian's `chromium` package with apt-get first when it is missing.
The console's browser tests (npm run test:console) and screenshots
(npm run console:screenshots) call it.
HELP
  exit 0
fi

log() { printf 'chromium.sh: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

if [[ -n ${CHROMIUM_PATH:-} ]]; then
  [[ -x $CHROMIUM_PATH ]] || die "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable"
  echo "$CHROMIUM_PATH"
  exit 0
fi

for candidate in /usr/bin/chromium /usr/bin/chromium-browser; do
  if [[ -x $candidate ]]; then
    echo "$candidate"
    exit 0
  fi
done

command -v apt-get >/dev/null || die "chromium is missing and there is no apt-get to install it (set CHROMIUM_PATH)"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
apt_log=$(mktemp)
trap 'rm -f "$apt_log"' EXIT
log "installing Debian's chromium package (apt-get; a minute or two)"
$sudo apt-get update -qq >"$apt_log" 2>&1 || true
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium \
  >>"$apt_log" 2>&1 || { cat "$apt_log" >&2; die "apt-get install chromium failed"; }
[[ -x /usr/bin/chromium ]] || die "apt-get installed chromium but /usr/bin/chromium is missing"
log "installed $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
echo /usr/bin/chromium
