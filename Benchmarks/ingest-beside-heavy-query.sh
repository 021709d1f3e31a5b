#!/usr/bin/env bash
# Ingest latency with and without heavy read queries running beside it (issue 12: blocking work
# off the cooperative pool). One server on a database pre-filled with FILL synthetic payloads of
# com.example.bench; wrk posts distinct reference payloads of com.example.app; in the "beside"
# phases, HEAVY curl loops ask `GET /v1/apps/com.example.bench/launch?group_by=os,device` (a
# query that reads the normalized histograms of every payload in the window: seconds, not ms).
# Phases alternate alone / beside, ROUNDS times, each with its own distinct payload file.
#
# usage: Benchmarks/ingest-beside-heavy-query.sh   (env: BIN, OUT, FILL, HEAVY, SECONDS_PER_PHASE, ROUNDS, PORT)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BIN:-.build/release/lifeline}"
out="${OUT:-bench-out}"
fill="${FILL:-300000}"
heavy="${HEAVY:-2}"
seconds="${SECONDS_PER_PHASE:-10}"
rounds="${ROUNDS:-2}"
port="${PORT:-18091}"
url="http://127.0.0.1:$port"
mkdir -p "$out"
db="$out/beside-$fill.sqlite"

if [ ! -f "$db" ]; then
    echo "filling $db with $fill synthetic payloads…" >&2
    "$bin" bench query --db "$db" --payloads "$fill" --days 30 --runs 1 >/dev/null
fi
for i in $(seq 1 $((rounds * 2))); do
    [ -f "$out/beside-bodies-$i.bin" ] || python3 ../shared/bench/make_payloads.py 20000 "$out/beside-bodies-$i.bin" \
        --seed "$((1000 + i))" >/dev/null
done
work="$(mktemp -d)"
cp "$db" "$work/db.sqlite"
# The fill leaves its WAL beside the file (committed, not yet checkpointed): copy it too.
[ -f "$db-wal" ] && cp "$db-wal" "$work/db.sqlite-wal"
ingest="$("$bin" keys create --db "$work/db.sqlite" --role ingest --app com.example.app | tail -n 1)"
read="$("$bin" keys create --db "$work/db.sqlite" --role read | tail -n 1)"
"$bin" serve --db "$work/db.sqlite" --port "$port" --log-level warning &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do curl -sf "$url/readyz" >/dev/null && break; sleep 0.1; done

heavy_loop() {
    while [ -f "$work/heavy" ]; do
        curl -s -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $read" \
            "$url/v1/apps/com.example.bench/launch?from=2026-10-02&to=2026-10-31&group_by=os,device" >>"$work/heavy.times"
    done
}

phase() { # $1 = alone|beside, $2 = payload file index
    if [ "$1" = beside ]; then
        touch "$work/heavy"
        for _ in $(seq 1 "$heavy"); do heavy_loop & done
        sleep 1
    fi
    local report
    report="$(LIFELINE_KEY=$ingest PAYLOADS="$out/beside-bodies-$2.bin" wrk -t1 -c32 -d"${seconds}s" --latency \
        -s ../shared/bench/load.lua "$url/v1/metrics")"
    rm -f "$work/heavy"
    wait_for_loops
    local rate p50 p99 non2xx
    rate="$(echo "$report" | awk '/Requests\/sec/ {print $2}')"
    p50="$(echo "$report" | awk '$1 == "50%" {print $2}')"
    p99="$(echo "$report" | awk '$1 == "99%" {print $2}')"
    non2xx="$(echo "$report" | awk '/Non-2xx/ {print $NF}')"
    printf '%-7s %10s req/s   p50 %8s   p99 %8s   non-2xx %s\n' "$1" "$rate" "$p50" "$p99" "${non2xx:-0}"
}
wait_for_loops() { while pgrep -f "group_by=os,device" >/dev/null; do sleep 0.1; done; }

echo "binary $bin, $fill payloads in the database, $heavy heavy query loop(s), ${seconds}s phases"
index=1
for _ in $(seq 1 "$rounds"); do
    phase alone "$index"; index=$((index + 1))
    phase beside "$index"; index=$((index + 1))
done
if [ -s "$work/heavy.times" ]; then
    sort -n "$work/heavy.times" | awk '{a[NR]=$1} END {printf "heavy query: %d answered, median %.2f s, max %.2f s\n", NR, a[int((NR+1)/2)], a[NR]}'
fi
