#!/usr/bin/env bash
# The worst-case read of issue 24 — GET /v1/apps/{app}/exits?group_by=version,os,device over the
# reference load — one at a time and three at once, on a release server: status, bytes, time of each
# answer and the server's peak resident memory (VmHWM). Run twice: MODE=unbounded (query: limits set
# far above the load: what the server did before bounded reads) and MODE=bounded (the defaults).
# With MODE=bounded it also pages three clients at once through a window under the source-row
# budget (PAGED_TO, default 2026-10-05: ~1/6 of the load), 10,000 rows a page.
#
# usage: Benchmarks/bounded-reads.sh   (env: BIN, OUT, N=24000, MODE=bounded|unbounded, PORT=18093)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${BIN:-.build/release/lifeline}"
out="${OUT:-bench-out}"
n="${N:-24000}"
mode="${MODE:-bounded}"
port="${PORT:-18093}"
paged_to="${PAGED_TO:-2026-10-05}"
app=com.example.app
db="$out/bounded-$n.sqlite"
mkdir -p "$out"
if [ ! -f "$db" ]; then
    [ -d "$out/ref$n" ] || python3 ../shared/bench/make_payloads.py "$n" "$out/bodies$n.bin" --dir "$out/ref$n"
    "$bin" ingest --db "$db" --app "$app" --log-level warning "$out/ref$n" | tail -n 1
fi
read_key="$("$bin" keys create --db "$db" --role read | tail -n 1)"
config="$out/bounded-$mode.yaml"
if [ "$mode" = unbounded ]; then
    printf 'query:\n  max_rows: 1000000\n  max_source_rows: 100000000\n  timeout_seconds: 3600\n' >"$config"
else
    printf 'query:\n  max_rows: 10000\n' >"$config"
fi
"$bin" serve --db "$db" --port "$port" --config "$config" --log-level warning &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
query="from=2026-10-01&to=2026-10-28&group_by=version,os,device"
get() {
    curl -sS -o "$out/bounded-answer-$1.json" -w "%{http_code} %{size_download} B %{time_total} s\n" \
        -H "Authorization: Bearer $read_key" "http://127.0.0.1:$port/v1/apps/$app/exits?$2"
}
echo "binary $bin; $mode; $db ($n documents)"
grep -E 'VmRSS' "/proc/$server/status" | sed 's/^/idle: /'
echo "== one worst-case read"
get one "$query"
head -c 300 "$out/bounded-answer-one.json"; echo
grep -E 'VmHWM' "/proc/$server/status"
echo "== three at once"
pids=()
for i in 1 2 3; do get "three-$i" "$query" & pids+=($!); done
wait "${pids[@]}"
grep -E 'VmHWM' "/proc/$server/status"
if [ "$mode" = bounded ]; then
    echo "== three clients paging at once through 2026-10-01…$paged_to"
    page_all() {
        local cursor="" pages=0 rows=0 started
        started=$(date +%s.%N)
        while :; do
            local uri="from=2026-10-01&to=$paged_to&group_by=version,os,device&limit=10000"
            [ -n "$cursor" ] && uri="$uri&cursor=$cursor"
            curl -sS -o "$out/bounded-page-$1.json" -H "Authorization: Bearer $read_key" \
                "http://127.0.0.1:$port/v1/apps/$app/exits?$uri"
            pages=$((pages + 1))
            rows=$((rows + $(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1])).get('rows', [])))" "$out/bounded-page-$1.json")))
            cursor="$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('next_cursor', ''))" "$out/bounded-page-$1.json")"
            [ -z "$cursor" ] && break
        done
        echo "client $1: $rows rows in $pages pages, $(echo "$(date +%s.%N) - $started" | bc) s"
    }
    pids=()
    for i in 1 2 3; do page_all "$i" & pids+=($!); done
    wait "${pids[@]}"
    grep -E 'VmHWM' "/proc/$server/status"
fi
