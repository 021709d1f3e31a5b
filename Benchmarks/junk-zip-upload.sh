#!/usr/bin/env bash
# The cost of a hostile dSYM upload (issue 24): a zip signature followed by MB megabytes of random
# bytes, posted as application/zip with a symbols key. Prints the status, the error JSON, the
# client's time and the server's CPU time (user + system, from /proc) spent on the request.
# Usage: BIN=.build/release/lifeline MB=200 Benchmarks/junk-zip-upload.sh
set -euo pipefail
BIN=$(realpath "${BIN:-.build/release/lifeline}")
MB=${MB:-200}
PORT=${PORT:-18096}
APP=com.example.demo
WORK=$(mktemp -d)
trap 'if [ -n "${SERVER:-}" ]; then kill "$SERVER" 2>/dev/null || true; fi; rm -rf "$WORK"' EXIT
cd "$WORK"
{ printf 'PK\003\004'; head -c $((MB << 20)) /dev/urandom; } > junk.zip
KEY=$("$BIN" keys create --db db.sqlite --role symbols --app $APP | tail -n 1)
"$BIN" serve --db db.sqlite --port "$PORT" --log-level error &
SERVER=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" > /dev/null 2>&1 && break; sleep 0.1; done
ticks() { awk '{ print $14 + $15 }' "/proc/$SERVER/stat"; }
HZ=$(getconf CLK_TCK)
BEFORE=$(ticks)
TIME=$(curl -s -o body.json -w '%{http_code} %{time_total}' -X POST \
    -H "Authorization: Bearer $KEY" -H 'Content-Type: application/zip' \
    --data-binary @junk.zip "http://127.0.0.1:$PORT/v1/apps/$APP/dsyms")
AFTER=$(ticks)
echo "MB=$MB status+time_total=$TIME server_cpu=$(echo "scale=2; ($AFTER - $BEFORE) / $HZ" | bc)s body=$(cat body.json)"
