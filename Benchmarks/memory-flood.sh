#!/usr/bin/env bash
# Issue 13's memory flood: 64 clients each post a ~4 MB plain-JSON body (244 distinct reference
# payloads) as fast as they can for SECONDS; prints the server's peak resident memory, how many
# requests were answered 202 / 503, and the refusals /metrics counted.
#
# usage: Benchmarks/memory-flood.sh [CONFIG.yaml]   (env: BIN, SECONDS_RUN, PORT)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BIN:-.build/release/lifeline}"
seconds="${SECONDS_RUN:-20}"
port="${PORT:-18095}"
url="http://127.0.0.1:$port"
[ -f bench-out/flood.json ] || {
    [ -f bench-out/flood-records.bin ] || python3 ../shared/bench/make_payloads.py 300 bench-out/flood-records.bin >/dev/null
    python3 Benchmarks/make_flood_body.py bench-out/flood-records.bin bench-out/flood.json
}
work="$(mktemp -d)"
ingest="$("$bin" keys create --db "$work/db.sqlite" --role ingest --app com.example.app | tail -n 1)"
read="$("$bin" keys create --db "$work/db.sqlite" --role read | tail -n 1)"
config=()
[ -n "${1:-}" ] && config=(--config "$1")
"$bin" serve --db "$work/db.sqlite" --port "$port" --log-level error "${config[@]}" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do curl -sf "$url/readyz" >/dev/null && break; sleep 0.1; done
before="$(awk '/VmRSS/ {print $2}' /proc/$server/status)"
report="$(LIFELINE_KEY=$ingest BODY=bench-out/flood.json wrk -t2 -c64 -d"${seconds}s" --timeout 30s \
    -s Benchmarks/flood.lua "$url/v1/metrics")"
peak="$(awk '/VmHWM/ {print $2}' /proc/$server/status)"
echo "$report" | grep -E "Requests/sec|Non-2xx|requests in|Latency"
echo "server RSS before: $((before / 1024)) MB, peak during the flood: $((peak / 1024)) MB"
curl -s -H "Authorization: Bearer $read" "$url/metrics" | grep -E "^lifeline_ingest_refusals_total|^lifeline_ingest_payloads_total" || true
