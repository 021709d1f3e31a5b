#!/usr/bin/env bash
# Ingest throughput of the two payload formats, alternated: the legacy reference load
# (../shared/bench/make_payloads.py) and its iOS 27 variant (Benchmarks/make_v2_payloads.py, same
# days and a comparable amount of content, plus three app states and eight slices per report).
# Per round and format: the in-process floor (`lifeline bench ingest-floor`), then HTTP on a fresh
# database (`wrk -t1 -c32`, 202 after COMMIT, rate limits set high).
#
# usage: Benchmarks/ingest-formats.sh   (env: BIN, OUT, N, ROUNDS, SECONDS_PER_RUN, PORT,
#        EXPLORER_VERSION_ROWS: the server's database.explorer_version_rows)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BIN:-.build/release/lifeline}"
out="${OUT:-bench-out}"
n="${N:-30000}"
rounds="${ROUNDS:-3}"
seconds="${SECONDS_PER_RUN:-9}"
port="${PORT:-18095}"
mkdir -p "$out"
[ -f "$out/formats-legacy.bin" ] || python3 ../shared/bench/make_payloads.py "$n" "$out/formats-legacy.bin" --seed 11
[ -f "$out/formats-v2.bin" ] || python3 Benchmarks/make_v2_payloads.py "$n" "$out/formats-v2.bin" --seed 11
cat >"$out/formats-limits.yaml" <<EOF
limits: {ingest_rate_per_key: 100000, ingest_burst_per_key: 100000, ingest_rate_per_ip: 100000, ingest_burst_per_ip: 100000}
EOF
if [ -n "${EXPLORER_VERSION_ROWS:-}" ]; then
    echo "database: {explorer_version_rows: $EXPLORER_VERSION_ROWS}" >>"$out/formats-limits.yaml"
fi
work="$(mktemp -d -p "$out")"
trap 'pkill -f "serve --db $work" 2>/dev/null || true; rm -rf "$work"' EXIT

floor() { # $1 = format
    "$bin" bench ingest-floor --payloads "$out/formats-$1.bin" 2>/dev/null |
        awk '/^prepare|^floor/ {printf "%s   ", $0} END {print ""}'
}

http() { # $1 = format
    rm -f "$work"/db.sqlite*
    "$bin" migrate --db "$work/db.sqlite" >/dev/null
    local key
    key="$("$bin" keys create --db "$work/db.sqlite" --role ingest --app com.example.app | tail -n 1)"
    "$bin" serve --db "$work/db.sqlite" --config "$out/formats-limits.yaml" --port "$port" --log-level warning &
    local server=$!
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
    local report
    report="$(LIFELINE_KEY=$key PAYLOADS="$out/formats-$1.bin" wrk -t1 -c32 -d"${seconds}s" --latency \
        -s ../shared/bench/load.lua "http://127.0.0.1:$port/v1/metrics")"
    kill $server
    wait $server 2>/dev/null || true
    printf '%-6s http %10s req/s   p50 %8s   p99 %8s   non-2xx %s\n' "$1" \
        "$(echo "$report" | awk '/Requests\/sec/ {print $2}')" "$(echo "$report" | awk '$1 == "50%" {print $2}')" \
        "$(echo "$report" | awk '$1 == "99%" {print $2}')" "$(echo "$report" | awk '/Non-2xx/ {print $NF}')"
}

echo "binary $bin; $n distinct payloads per format; ${seconds}s HTTP runs"
for _ in $(seq 1 "$rounds"); do
    for format in legacy v2; do
        echo "$format floor: $(floor "$format")"
        http "$format"
    done
done
