#!/usr/bin/env bash
# Aggregate query latency over N distinct stored metric payloads, on SQLite and on PostgreSQL, in
# one run (`lifeline bench query`: the same generated payloads, written through each store's
# writer, then each query 21 times through `Analyzer`, the code the HTTP endpoints call).
# A throwaway PostgreSQL server (initdb as the postgres user when run as root; default fsync and
# synchronous_commit) on a temporary directory, removed afterwards.
#
# usage: Benchmarks/postgres-query.sh   (env: BIN, OUT, N=1000000, DAYS=30, POOL=16,
#        STORES="sqlite postgres": the stores to run; a SQLite file of N payloads already in OUT is
#        reused, so remove it after a change of what the fold writes)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BIN:-.build/release/lifeline}"
out="${OUT:-bench-out}"
n="${N:-1000000}"
days="${DAYS:-30}"
pool="${POOL:-16}"
mkdir -p "$out"
pgbin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
work="$(mktemp -d /tmp/lifeline-bench-XXXXXX)"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$work"
pgport=55498
as_pg "$pgbin/initdb" -D "$work/pg" -A trust -U lifeline --no-sync >/dev/null
as_pg "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -o "-p $pgport -k $work -c listen_addresses=127.0.0.1" -w start >/dev/null
cleanup() {
    as_pg "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
"$pgbin/createdb" -h 127.0.0.1 -p $pgport -U lifeline query
url="postgres://lifeline@127.0.0.1:$pgport/query?sslmode=disable&pool=$pool"

echo "binary $bin; $n payloads over $days days; PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}'), pool $pool"
stores="${STORES:-sqlite postgres}"
if [[ " $stores " == *" sqlite "* ]]; then
echo "== SQLite ($out/query-$n.sqlite)"
/usr/bin/time -f "bench process: %e s wall, %U s user, %S s sys, max RSS %M KB" \
    "$bin" bench query --db "$out/query-$n.sqlite" --payloads "$n" --days "$days" --log-level warning
ls -l "$out/query-$n.sqlite" | awk '{print "file bytes:", $5}'
fi
[[ " $stores " == *" postgres "* ]] || exit 0
echo "== PostgreSQL"
/usr/bin/time -f "bench process: %e s wall, %U s user, %S s sys, max RSS %M KB" \
    "$bin" bench query --db "$url" --payloads "$n" --days "$days" --log-level warning
psql -h 127.0.0.1 -p $pgport -U lifeline -d query -Atc "SELECT 'database bytes: ' || pg_database_size('query')"
psql -h 127.0.0.1 -p $pgport -U lifeline -d query -Atc "
    SELECT relname || ': ' || pg_total_relation_size(c.oid) FROM pg_class c
    WHERE relname IN ('payloads','exit_cells','usage_rollup','signpost_cells','bucket_cells','payload_raw_default')
    ORDER BY 1"
# Where a query's time goes: the plan of the slowest one's statement (its cells, summed by the reader).
psql -h 127.0.0.1 -p $pgport -U lifeline -d query -c "EXPLAIN (ANALYZE, BUFFERS)
    SELECT os, device, states, reasons, counts FROM exit_cells
    WHERE app = 1 AND day BETWEEN '2026-10-02' AND '2026-10-31'" | tail -n 8
