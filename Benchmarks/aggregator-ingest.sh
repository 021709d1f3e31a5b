#!/usr/bin/env bash
# Ingest over HTTP with the aggregator stage (issue 25): the reference load for SECONDS at full
# speed (wrk -t1 -c32, rate limits raised, 202 after COMMIT), then how long the fold takes to
# catch up once the load stops, with the server's own counters: peak RSS, bytes written
# (/proc/PID/io), the WAL's largest size while serving, stored bytes per payload, the server's CPU
# seconds (/proc/PID/stat) and their share per payload.
#
# usage: Benchmarks/aggregator-ingest.sh   (env: BIN, OUT, PAYLOADS, SECONDS_RUN, PORT, CONNECTIONS, PAGE_SIZE,
#        EXPLORER_WRITE_SECONDS: database.explorer_write_seconds, EXPLORER_VERSION_ROWS: database.explorer_version_rows,
#        EXPLORER_VERSION_SECONDS: database.explorer_version_seconds,
#        RAW_COMPACTION: database.raw_compaction, WAIT_COMPACTION=1: wait for the raw compaction to catch up,
#        BASE_DB: start from a copy of this database (say, one already holding 200,000 payloads) instead of an empty one,
#        WRITES_BY_TABLE=1: attribute every page written (WAL frames and checkpoint writes) to its table or index,
#        with the LD_PRELOAD shim Benchmarks/walspy/walspy.c, built with the system's cc)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath "${BIN:-.build/release/lifeline}")"
out="${OUT:-bench-out}"
payloads="${PAYLOADS:-$out/bodies60k.bin}"
seconds="${SECONDS_RUN:-12}"
port="${PORT:-18097}"
connections="${CONNECTIONS:-32}"
mkdir -p "$out"
[ -f "$payloads" ] || python3 ../shared/bench/make_payloads.py 60000 "$payloads"
cat >"$out/aggregator-limits.yaml" <<YAML
limits: {ingest_rate_per_key: 100000, ingest_burst_per_key: 100000, ingest_rate_per_ip: 100000, ingest_burst_per_ip: 100000}
# The reference payloads are dated 2026-10-01…28: kept whatever today's date (the default 30 days of
# raw copies would let the pruner remove them during a run from 2026-11-28 on).
retention: {raw_days: 0, data_days: 0}
YAML
database=""
[ -n "${EXPLORER_WRITE_SECONDS:-}" ] && database="explorer_write_seconds: $EXPLORER_WRITE_SECONDS"
[ -n "${EXPLORER_VERSION_ROWS:-}" ] && database="${database:+$database, }explorer_version_rows: $EXPLORER_VERSION_ROWS"
[ -n "${EXPLORER_VERSION_SECONDS:-}" ] && database="${database:+$database, }explorer_version_seconds: $EXPLORER_VERSION_SECONDS"
[ -n "${RAW_COMPACTION:-}" ] && database="${database:+$database, }raw_compaction: $RAW_COMPACTION"
if [ -n "$database" ]; then
    echo "database: {$database}" >>"$out/aggregator-limits.yaml"
fi
work="$(mktemp -d -p "$out")"
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
db="$work/db.sqlite"
if [ -n "${PAGE_SIZE:-}" ]; then # a fresh file with another page size (it holds from the first page on)
    python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA page_size=$PAGE_SIZE'); c.execute('CREATE TABLE t(x)'); c.execute('DROP TABLE t'); c.commit()" "$db"
fi
if [ -n "${BASE_DB:-}" ]; then
    cp "$BASE_DB" "$db"
    [ -f "$BASE_DB-wal" ] && cp "$BASE_DB-wal" "$db-wal"
    base_payloads=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM payloads').fetchone()[0])" "$db")
    echo "base: $base_payloads payloads stored before the load"
fi
"$bin" migrate --db "$db" >/dev/null
preload=""
if [ -n "${WRITES_BY_TABLE:-}" ]; then
    cc -O2 -shared -fPIC -o "$work/walspy.so" Benchmarks/walspy/walspy.c -ldl
    preload="$work/walspy.so"
fi
key="$("$bin" keys create --db "$db" --role ingest --app com.example.app | tail -n 1)"
admin="$("$bin" keys create --db "$db" --role admin | tail -n 1)"
LD_PRELOAD="$preload" WALSPY_LOG="$work/writes.log" "$bin" serve --db "$db" --config "$out/aggregator-limits.yaml" --port "$port" --log-level warning &
server=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
wal_max=0
( while kill -0 $server 2>/dev/null; do
    s=$(stat -c %s "$db-wal" 2>/dev/null || echo 0); echo "$s"; sleep 0.2
  done ) >"$work/wal.log" &
sampler=$!
report="$(LIFELINE_KEY=$key PAYLOADS="$payloads" wrk -t1 -c"$connections" -d"${seconds}s" --latency \
    -s ../shared/bench/load.lua "http://127.0.0.1:$port/v1/metrics")"
stopped=$(date +%s.%N)
lag() {
    curl -sf -H "Authorization: Bearer $admin" "http://127.0.0.1:$port/metrics" |
        awk '/^lifeline_aggregation_lag_documents / {print $2}'
}
lag_at_stop="$(lag)"
while [ "$(lag)" != "0" ] && [ "$(lag)" != "0.0" ]; do sleep 0.05; done
caught_up=$(date +%s.%N)
compaction_wait=""
if [ -n "${WAIT_COMPACTION:-}" ]; then # until the raw compaction reaches the newest payload
    compaction_wait=$(python3 - "$db" <<'PY'
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], timeout=10)
t0 = time.time()
while time.time() - t0 < 300:
    through, head = c.execute("SELECT (SELECT through FROM raw_compaction), (SELECT max(id) FROM payloads)").fetchone()
    if through == head: break
    time.sleep(0.1)
print(f"{time.time() - t0:.1f}")
PY
)
fi
written=$(awk '/^write_bytes/ {print $2}' /proc/$server/io)
rss=$(awk '/^VmHWM/ {print $2}' /proc/$server/status)
metrics="$(curl -sf -H "Authorization: Bearer $admin" "http://127.0.0.1:$port/metrics")"
stored=$(echo "$metrics" | awk '/^lifeline_aggregation_folded_documents / {printf "%d", $2}')
commits=$(echo "$metrics" | awk '/^lifeline_writer_transactions_total / {t=$2} /^lifeline_aggregation_folds_total / {f=$2} END {printf "%d door, %d fold", t, f}')
cpu=$(awk '{print $14 + $15}' /proc/$server/stat) # user + system ticks of the server, start to stop
kill $server; wait $server 2>/dev/null || true
kill $sampler 2>/dev/null || true
wal_max=$(sort -n "$work/wal.log" | tail -n 1)
size=$(stat -c %s "$db")
requests=$(echo "$report" | awk '/requests in/ {print $1}')
printf 'http %s req/s  p50 %s  p99 %s  non-2xx %s  requests %s\n' \
    "$(echo "$report" | awk '/Requests\/sec/ {print $2}')" "$(echo "$report" | awk '$1 == "50%" {print $2}')" \
    "$(echo "$report" | awk '$1 == "99%" {print $2}')" "$(echo "$report" | awk '/Non-2xx/ {print $NF}')" "$requests"
printf 'fold: lag at stop %s documents, caught up %.2f s after the load stopped; %s documents folded\n' \
    "$lag_at_stop" "$(echo "$caught_up - $stopped" | bc)" "$stored"
echo "commits: $commits"
ticks=$(getconf CLK_TCK)
printf 'cpu: server %.1f s (%.3f ms per payload)\n' "$(echo "$cpu / $ticks" | bc -l)" \
    "$(echo "$cpu * 1000 / $ticks / ${stored:-1}" | bc -l)"
printf 'server: peak RSS %d MB, written %d MB (%d KB per payload), WAL max %d MB, database %d MB (%d B per payload)\n' \
    $((rss / 1024)) $((written / 1048576)) $((written / 1024 / ${stored:-1})) $((wal_max / 1048576)) \
    $((size / 1048576)) $((size / ${stored:-1}))
# The raw copies the server re-deflated behind the fold by the time it stopped (migration 0023),
# and the bytes in use per payload (dbstat: pages of tables and indexes; free pages apart).
[ -n "$compaction_wait" ] && echo "raw compaction: caught up $compaction_wait s after the fold"
python3 - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
through, n, before, after = c.execute("SELECT through, compacted, bytes_before, bytes_after FROM raw_compaction").fetchone()
payloads = max(c.execute("SELECT count(*) FROM payloads").fetchone()[0], 1)
raw = c.execute("SELECT (SELECT total(length(raw)) FROM payload_raw) + (SELECT total(length(raw)) FROM payload_raw_packed)").fetchone()[0]
print(f"raw copies: {n} of {payloads} rewritten ({before} -> {after} bytes), watermark {through}; "
      f"{raw / payloads:.0f} B per raw copy now")
used = c.execute("SELECT sum(pgsize) FROM dbstat").fetchone()[0]
raw_pages = c.execute("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN ('payload_raw', 'payload_raw_packed')").fetchone()[0]
free = c.execute("PRAGMA freelist_count").fetchone()[0] * c.execute("PRAGMA page_size").fetchone()[0]
# The version-level rows (`*_by_version*`) are one per version, day, app state and category, not per
# payload: once a load's version-days are all touched, further payloads add nothing there.
versions = c.execute("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE '%by_version%'").fetchone()[0]
print(f"stored in use: {used / payloads:.0f} B per payload (raw copies {raw_pages / payloads:.0f}, "
      f"version-level rows {versions / payloads:.0f}), free pages {free / payloads:.0f} B per payload")
PY
if [ -n "$preload" ]; then
    python3 - "$db" "$work/writes.log" "${stored:-1}" <<'PY'
import collections, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
page_size = c.execute("PRAGMA page_size").fetchone()[0]
owner = dict(c.execute("SELECT pageno, name FROM dbstat"))
wal, checkpoint = collections.Counter(), collections.Counter()
for line in open(sys.argv[2]):
    parts = line.split()
    if parts[0] == "c":
        offset, size = int(parts[1]), int(parts[2])
        for page in range(offset // page_size + 1, (offset + size) // page_size + 1):
            checkpoint[owner.get(page, "(free or new)")] += page_size
    else:
        wal[owner.get(int(parts[0]), "(free or new)")] += page_size
payloads = int(sys.argv[3])
total = sum(wal.values()) + sum(checkpoint.values())
print(f"written by table (KB per payload; WAL frames + checkpoint writes; {total / payloads / 1024:.1f} KB in all):")
for name, _ in collections.Counter({k: wal[k] + checkpoint[k] for k in set(wal) | set(checkpoint)}).most_common(14):
    print(f"  {name:40s} {wal[name] / payloads / 1024:6.1f} + {checkpoint[name] / payloads / 1024:6.1f}")
PY
fi
# load.lua cycles through the file: past its last payload the requests repeat stored documents
# (answered as duplicates, folded nothing), which a rate must not count as distinct ingest.
if [ -n "$requests" ] && [ -n "$stored" ] && [ "$requests" -gt $((stored + connections)) ]; then
    echo "warning: $requests requests for $stored stored documents: the run went past the file's distinct payloads; use a larger PAYLOADS file or a shorter SECONDS_RUN" >&2
fi
