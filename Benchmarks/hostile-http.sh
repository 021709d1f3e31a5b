#!/usr/bin/env bash
# Hostile clients against a release server while well-behaved clients post the reference load:
# does the server stay within its memory budget, and are the others still answered?
#
# usage: Benchmarks/hostile-http.sh [SECONDS] [HOSTILE_THREADS]   (after `swift build -c release`)
# Prints wrk's rate and latency for the reference load alone, then with hostile posters beside
# it, the hostile requests' answers and the server's peak resident memory (VmHWM).
# Traffic goes only to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-10}"
hostile_threads="${2:-4}"
bin=.build/release/lifeline
port=18093
out="$(mktemp -d)"
trap 'kill "${server:-0}" 2>/dev/null || true; rm -rf "$out"' EXIT

python3 ../shared/bench/make_payloads.py --bundle com.example.app 20000 "$out/bodies.bin" >/dev/null
for shape in long-key deep-flame empty-arrays empty-frames many-buckets dense-documents; do
    "$bin" bench hostile --one "$shape" --size $((4 * 1024 * 1024 - 4096)) --write-body "$out/$shape.json"
done
key=$("$bin" keys create --db "$out/db.sqlite" --role ingest --app com.example.app | tail -n 1)
"$bin" serve --db "$out/db.sqlite" --port "$port" --log-level error &
server=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done

run_wrk() {
    LIFELINE_KEY=$key PAYLOADS="$out/bodies.bin" wrk -t1 -c16 -d"${seconds}s" --latency \
        -s ../shared/bench/load.lua "http://127.0.0.1:$port/v1/metrics" |
        grep -E 'Requests/sec|  50%|  99%|Non-2xx|Socket errors' | tr -s ' ' | paste -sd' '
}

echo "reference load alone:    $(run_wrk)"
grep VmHWM "/proc/$server/status"
python3 Benchmarks/hostile_client.py "http://127.0.0.1:$port/v1/metrics" "$key" "$seconds" "$hostile_threads" \
    "$out"/*.json >"$out/hostile.txt" &
hostile=$!
echo "with $hostile_threads hostile posters: $(run_wrk)"
wait "$hostile"
sed 's/^/  hostile /' "$out/hostile.txt"
grep -E 'VmHWM|VmRSS' "/proc/$server/status"
