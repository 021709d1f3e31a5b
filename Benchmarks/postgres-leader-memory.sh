#!/usr/bin/env bash
# A PostgreSQL leader's memory under the reference load and through its fold's drain: one
# `lifeline serve` node (the leader: it folds) against a throwaway PostgreSQL server, `wrk -t1
# -c32` for SECONDS_PER_RUN, then the time until `lifeline_aggregation_lag_documents` is back to
# 0. Prints per round the door's rate and p99, the node's VmHWM after the load and again after the
# drain, the documents the fold took beside the door (the door's count less the lag when the load
# stopped; the lag is refreshed once a second) and the drain's rate. Binaries given as NAME=PATH
# are alternated round by round (the machine is noisy: compare within one run).
#
# usage: Benchmarks/postgres-leader-memory.sh [NAME=BINARY ...]   (env: OUT, N, ROUNDS, SECONDS_PER_RUN)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-bench-out}"
rounds="${ROUNDS:-2}"
n="${N:-30000}"
seconds="${SECONDS_PER_RUN:-10}"
[ $# -gt 0 ] || set -- "head=.build/release/lifeline"
. Benchmarks/postgres-throwaway.sh
pgport=55497
port=18113
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    as_pg "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
lag() {
    curl -sf -H "Authorization: Bearer $1" "http://127.0.0.1:$port/metrics" |
        awk '/^lifeline_aggregation_lag_documents / {print $2 + 0}'
}
for round in $(seq 1 "$rounds"); do
    for spec in "$@"; do
        name="${spec%%=*}"
        bin="$(realpath "${spec#*=}")"
        rm -rf "$work/pg"
        as_pg "$pgbin/initdb" -D "$work/pg" -A trust -U lifeline --no-sync >/dev/null
        as_pg "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -o "-p $pgport -k $work -c listen_addresses=127.0.0.1" -w start >/dev/null
        "$pgbin/createdb" -h 127.0.0.1 -p "$pgport" -U lifeline bench
        url="postgres://lifeline@127.0.0.1:$pgport/bench?sslmode=disable&pool=16"
        key="$("$bin" keys create --db "$url" --role ingest --app com.example.app | tail -n 1)"
        admin="$("$bin" keys create --db "$url" --role admin | tail -n 1)"
        "$bin" serve --db "$url" --config "$out/nodes-limits.yaml" --port "$port" --log-level warning &
        server=$!
        for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
        report="$(LIFELINE_KEY=$key PAYLOADS="$out/formats-legacy.bin" wrk -t1 -c32 -d"${seconds}s" --latency \
            -s ../shared/bench/load.lua "http://127.0.0.1:$port/v1/metrics")"
        hwm_load=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$server/status")
        start=$(date +%s.%N)
        behind=$(lag "$admin")
        for _ in $(seq 1 600); do [ "$(lag "$admin")" = 0 ] && break; sleep 0.1; done
        drained=$(echo "$(date +%s.%N) - $start" | bc)
        hwm_drain=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$server/status")
        rate=$(echo "$report" | awk '/Requests\/sec/ {print $2}')
        requests=$(echo "$report" | awk '/requests in/ {print $1}')
        p99=$(echo "$report" | awk '$1 == "99%" {print $2}')
        printf "round %d %-10s door %8s/s p99 %9s  VmHWM %4d MB after the load, %4d MB after the drain; %6d folded beside the door; %6s drained in %.1f s (%.0f/s)\n" \
            "$round" "$name" "$rate" "$p99" "$hwm_load" "$hwm_drain" "$((requests - behind))" "$behind" "$drained" \
            "$(echo "$behind / $drained" | bc -l)"
        kill "$server"
        wait "$server" 2>/dev/null || true
        server=""
        as_pg "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null
    done
done
