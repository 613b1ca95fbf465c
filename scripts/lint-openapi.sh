#!/usr/bin/env bash
# Lints the OpenAPI document the gateway serves with Redocly CLI (recommended ruleset) and
# Spectral (spectral:oas); any error or warning fails. Offline: the document is generated
# from the routes into a temporary file (no server, no service), and neither tool's
# telemetry or update check is asked to reach the network.
#   bash scripts/lint-openapi.sh
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
doc="$tmp/openapi.json"
node --import tsx scripts/openapi.ts >"$doc"

export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true REDOCLY_SUPPRESS_NOTIFICATIONS=true
echo "== redocly lint (recommended)"
# Redocly fails only on errors; its JSON report's totals make warnings fail too.
npx --no-install redocly lint --config scripts/openapi/redocly.yaml --format json "$doc" >"$tmp/redocly.json" 2>"$tmp/redocly.log" || true
node -e '
  const fs = require("node:fs");
  let report;
  try { report = JSON.parse(fs.readFileSync(process.argv[1], "utf8")); }
  catch { console.error(fs.readFileSync(process.argv[2], "utf8")); console.error("redocly: no report"); process.exit(1); }
  for (const p of report.problems ?? []) {
    const where = p.location?.[0]?.pointer ?? "";
    console.error(`${p.severity} ${p.ruleId} ${where}: ${p.message}`);
  }
  const { errors = 0, warnings = 0 } = report.totals ?? {};
  if (errors + warnings > 0) { console.error(`redocly: ${errors} errors, ${warnings} warnings`); process.exit(1); }
  console.log("redocly: no errors, no warnings");
' "$tmp/redocly.json" "$tmp/redocly.log"

echo "== spectral lint (spectral:oas)"
npx --no-install spectral lint --ruleset scripts/openapi/spectral.yaml --fail-severity warn --quiet "$doc"
echo "spectral: no errors, no warnings"
