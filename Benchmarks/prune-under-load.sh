#!/usr/bin/env bash
# Ingest latency while the retention pruner deletes most of a large database (issue 13: "no long
# write lock; ingest p99 barely moves while it runs").
#
# One server on a copy of a database pre-filled with FILL synthetic payloads of com.example.bench
# over 30 days (2026-10-02 … 2026-10-31, `lifeline bench query`); wrk posts distinct reference
# payloads of com.example.app, moved to recent days (2026-11-01 … 28, kept) unless OLD_DAYS=1
# (then they land in 2026-10-01 … 28, many of them in the days being pruned: the worst case, the
# pruner chases them). Phases of SECONDS_PER_PHASE each:
#   alone   — ingest only;
#   beside  — `lifeline prune` (a second process, as an operator would run it; the server's own
#             pruning service runs the same Pruner) keeps the days from KEEP_FROM on, started
#             with the phase, which lasts PRUNE_PHASE_SECONDS (longer than the prune; its wall
#             time is printed);
#   after   — ingest only, on the pruned database.
# Then the file size before and after, and a second prune of the same days (nothing left to do).
#
# usage: Benchmarks/prune-under-load.sh
#   (env: BIN, OUT, FILL, KEEP_FROM, SECONDS_PER_PHASE, PRUNE_PHASE_SECONDS, PORT, OLD_DAYS)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BIN:-.build/release/lifeline}"
out="${OUT:-bench-out}"
fill="${FILL:-300000}"
keep_from="${KEEP_FROM:-2026-10-21}"
seconds="${SECONDS_PER_PHASE:-20}"
prune_seconds="${PRUNE_PHASE_SECONDS:-100}"
port="${PORT:-18093}"
url="http://127.0.0.1:$port"
mkdir -p "$out"
db="$out/beside-$fill.sqlite"

if [ ! -f "$db" ]; then
    echo "filling $db with $fill synthetic payloads…" >&2
    "$bin" bench query --db "$db" --payloads "$fill" --days 30 --runs 1 >/dev/null
fi
# Distinct bodies for every phase (~1,700 requests/s: the beside phase needs the most).
for spec in 1:40000 2:200000 3:40000; do
    i="${spec%%:*}"
    [ -f "$out/prune-bodies-$i.bin" ] || python3 ../shared/bench/make_payloads.py "${spec##*:}" \
        "$out/prune-bodies-$i.bin" --seed "$((2000 + i))" >/dev/null
done
bodies=prune-bodies
if [ "${OLD_DAYS:-0}" != 1 ]; then
    bodies=prune-recent-bodies
    for i in 1 2 3; do
        [ -f "$out/$bodies-$i.bin" ] || python3 Benchmarks/shift_bodies.py "$out/prune-bodies-$i.bin" \
            "$out/$bodies-$i.bin" 2026-10- 2026-11-
    done
fi
days=$(($(date -u +%s) / 86400 - $(date -u -d "$keep_from" +%s) / 86400 + 1))
work="$(mktemp -d -p "$out")"
cp "$db" "$work/db.sqlite"
[ -f "$db-wal" ] && cp "$db-wal" "$work/db.sqlite-wal"
"$bin" migrate --db "$work/db.sqlite" >/dev/null
ingest="$("$bin" keys create --db "$work/db.sqlite" --role ingest --app com.example.app | tail -n 1)"
cat >"$work/config.yaml" <<EOF
limits: {ingest_rate_per_key: 100000, ingest_burst_per_key: 100000, ingest_rate_per_ip: 100000, ingest_burst_per_ip: 100000}
retention: {data_days: 0, raw_days: 0, idempotency_days: 0, alert_history_days: 0}
EOF
"$bin" serve --db "$work/db.sqlite" --config "$work/config.yaml" --port "$port" --log-level warning &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do curl -sf "$url/readyz" >/dev/null && break; sleep 0.1; done
size() { stat -c %s "$work/db.sqlite"; }

phase() { # $1 = label, $2 = body file index, $3 = duration
    local report
    report="$(LIFELINE_KEY=$ingest PAYLOADS="$out/$bodies-$2.bin" wrk -t1 -c32 -d"$3s" --latency \
        -s ../shared/bench/load.lua "$url/v1/metrics")"
    local rate p50 p99 max non2xx
    rate="$(echo "$report" | awk '/Requests\/sec/ {print $2}')"
    p50="$(echo "$report" | awk '$1 == "50%" {print $2}')"
    p99="$(echo "$report" | awk '$1 == "99%" {print $2}')"
    max="$(echo "$report" | awk '$1 == "Latency" {print $4}')"
    non2xx="$(echo "$report" | awk '/Non-2xx/ {print $NF}')"
    printf '%-7s %5ss %10s req/s   p50 %8s   p99 %8s   max %8s   non-2xx %s\n' \
        "$1" "$3" "$rate" "$p50" "$p99" "$max" "${non2xx:-0}"
}

echo "binary $bin, $fill payloads over 30 days in the database, keeping from $keep_from (data_days $days)"
echo "file before: $(size) bytes"
phase alone 1 "$seconds"
start=$(date +%s.%N)
"$bin" prune --db "$work/db.sqlite" --data-days "$days" --raw-days 0 --idempotency-days 0 \
    --alert-history-days 0 >"$work/prune.out" 2>"$work/prune.err" &
pruner=$!
phase beside 2 "$prune_seconds"
if kill -0 $pruner 2>/dev/null; then echo "the prune outlasted the phase: raise PRUNE_PHASE_SECONDS" >&2; fi
status=0
wait $pruner || status=$?
end=$(date +%s.%N)
if [ "$status" -ne 0 ]; then echo "prune failed ($status):" >&2; tail -n 5 "$work/prune.err" >&2; fi
echo "prune: $(head -n 1 "$work/prune.out")"
echo "prune: $(tail -n 1 "$work/prune.out") (wall $(python3 -c "print(round($end - $start, 1))") s)"
phase after 3 "$seconds"
echo "file after: $(size) bytes"
"$bin" prune --db "$work/db.sqlite" --data-days "$days" --raw-days 0 --idempotency-days 0 --alert-history-days 0 |
    sed 's/^/second prune: /'
