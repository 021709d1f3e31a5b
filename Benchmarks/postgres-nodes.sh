#!/usr/bin/env bash
# Ingest throughput on PostgreSQL with one and with two `lifeline serve` nodes, beside the SQLite
# figure, on the reference load (../shared/bench/make_payloads.py, distinct realistic payloads).
# A throwaway PostgreSQL server (initdb as the postgres user when run as root; fsync on, the
# default synchronous_commit) on a temporary directory; every run on a fresh database. wrk with
# 32 connections in all: one wrk -c32 for one node, two wrk -c16 (one per node) for two.
# Everything shares this machine's cores: the two-node figure shows where the time goes, not
# what two machines would do.
#
# usage: Benchmarks/postgres-nodes.sh   (env: BIN, OUT, N, ROUNDS, SECONDS_PER_RUN)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BIN:-.build/release/lifeline}"
out="${OUT:-bench-out}"
n="${N:-30000}"
rounds="${ROUNDS:-3}"
seconds="${SECONDS_PER_RUN:-10}"
. Benchmarks/postgres-throwaway.sh
pgport=55499
as_pg "$pgbin/initdb" -D "$work/pg" -A trust -U lifeline --no-sync >/dev/null
as_pg "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -o "-p $pgport -k $work -c listen_addresses=127.0.0.1 -c max_connections=100" -w start >/dev/null
cleanup() {
    pkill -f "lifeline-bench-node" 2>/dev/null || true
    pkill -f "serve --db $work" 2>/dev/null || true
    pkill -f "serve --db postgres://lifeline@127.0.0.1:$pgport" 2>/dev/null || true
    as_pg "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

serve() { # $1 = db, $2 = port
    "$bin" serve --db "$1" --config "$out/nodes-limits.yaml" --port "$2" --log-level warning &
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$2/readyz" >/dev/null && break; sleep 0.1; done
}

load() { # $1 = key, $2 = port, $3 = connections
    LIFELINE_KEY=$1 PAYLOADS="$out/formats-legacy.bin" wrk -t1 -c"$3" -d"${seconds}s" --latency \
        -s ../shared/bench/load.lua "http://127.0.0.1:$2/v1/metrics"
}

summary() { # $1 = label, wrk reports on stdin (one or two)
    awk -v label="$1" '
        /Requests\/sec/ { rps += $2 }
        $1 == "99%" { v = $2; ms = v + 0; if (v ~ /us$/) ms /= 1000; else if (v ~ /[^m]s$/) ms *= 1000; if (ms > p99) p99 = ms }
        $1 == "50%" { v = $2; ms = v + 0; if (v ~ /us$/) ms /= 1000; else if (v ~ /[^m]s$/) ms *= 1000; if (ms > p50) p50 = ms }
        /Non-2xx/ { bad += $NF }
        END { printf "%-16s %9.0f payloads/s   p50 %7.2f ms   p99 %7.2f ms   non-2xx %d\n", label, rps, p50, p99, bad }'
}

# The aggregator behind the door: documents not yet folded when the load stops, and how long
# the leader takes to fold them (lifeline_aggregation_lag_documents, refreshed each second).
lag_documents() { # $1 = port, $2 = admin token
    curl -sf -H "Authorization: Bearer $2" "http://127.0.0.1:$1/metrics" |
        awk '/^lifeline_aggregation_lag_documents / {print $2 + 0}' || true
}
fold_drain() { # $1 = port, $2 = admin token
    local start lag now
    start=$(date +%s.%N)
    lag=$(lag_documents "$1" "$2")
    for _ in $(seq 1 300); do
        now=$(lag_documents "$1" "$2")
        [ "${now:-1}" = 0 ] && break
        sleep 0.1
    done
    printf "                 fold lag when the load stopped: %s documents; back to 0 after %.1f s (1 s refresh)\n" \
        "${lag:-?}" "$(echo "$(date +%s.%N) - $start" | bc)"
}

round=0
echo "binary $bin; $n distinct payloads; ${seconds}s runs; PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}')"
for _ in $(seq 1 "$rounds"); do
    round=$((round + 1))
    # SQLite, one node.
    "$bin" migrate --db "$work/s$round.sqlite" >/dev/null
    key="$("$bin" keys create --db "$work/s$round.sqlite" --role ingest --app com.example.app | tail -n 1)"
    serve "$work/s$round.sqlite" 18101
    load "$key" 18101 32 | summary "sqlite 1 node"
    pkill -f "serve --db $work/s$round.sqlite" || true
    sleep 1
    # PostgreSQL, one node then two.
    for nodes in 1 2; do
        db="bench_${round}_$nodes"
        "$pgbin/createdb" -h 127.0.0.1 -p $pgport -U lifeline "$db"
        url="postgres://lifeline@127.0.0.1:$pgport/$db?sslmode=disable&pool=16"
        key="$("$bin" keys create --db "$url" --role ingest --app com.example.app | tail -n 1)"
        admin="$("$bin" keys create --db "$url" --role admin | tail -n 1)"
        serve "$url" 18102
        if [ "$nodes" = 1 ]; then
            load "$key" 18102 32 | summary "postgres 1 node"
        else
            serve "$url" 18103
            { load "$key" 18102 16 & load "$key" 18103 16 & wait; } | summary "postgres 2 nodes"
        fi
        fold_drain 18102 "$admin"
        pkill -f "serve --db postgres://lifeline@127.0.0.1:$pgport/$db" || true
        sleep 1
    done
done
