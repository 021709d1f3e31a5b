#!/usr/bin/env bash
# A crash query's time with N broken symbol files (issue 24): each broken file is the demo dSYM
# (built here: clang, ld64.lld-14, dsymutil-14) with one bit of its __debug_info CU header's
# abbreviation offset flipped (llvm-symbolizer 14 dies of SIGSEGV on it) and its own LC_UUID.
# One crash whose stack has a frame of the good Demo and one of each broken binary; the crash
# detail is asked RUNS times; prints the median and the slowest, per N.
# Usage: BIN=.build/release/lifeline NS="0 3 13" Benchmarks/broken-dsyms.sh
set -euo pipefail
BIN=${BIN:-.build/release/lifeline}
NS=${NS:-"0 3 13"}
RUNS=${RUNS:-20}
PORT=${PORT:-18095}
APP=com.example.demo
WORK=$(mktemp -d)
trap 'if [ -n "${SERVER:-}" ]; then kill "$SERVER" 2>/dev/null || true; fi; rm -rf "$WORK"' EXIT
cd "$WORK"
cat > demo.c <<'C'
int helper(int x) { return x * 3 + 1; }
int parse(int x) __asm__("_$s4Demo6ParserV5parseySiSSF");
int parse(int x) {
    int y = helper(x);
    return y + 2;
}
int main(void) { return parse(4); }
C
clang -target arm64-apple-ios17.0 -g -c demo.c -o demo.o
ld64.lld-14 -arch arm64 -platform_version ios 17.0 17.0 -e _main -o Demo demo.o
dsymutil-14 Demo -o Demo.dSYM
for N in $NS; do
    rm -rf db* dsyms && mkdir dsyms
    python3 - "$N" "$APP" > crash.json <<'PY'
import json, struct, sys
n, app = int(sys.argv[1]), sys.argv[2]
data = open('Demo.dSYM/Contents/Resources/DWARF/Demo', 'rb').read()
ncmds = struct.unpack_from('<I', data, 16)[0]
cursor, uuid_at, info = 32, None, None
for _ in range(ncmds):
    cmd, size = struct.unpack_from('<II', data, cursor)
    if cmd == 0x1B: uuid_at = cursor + 8
    if cmd == 0x19:
        for s in range(struct.unpack_from('<I', data, cursor + 64)[0]):
            sect = cursor + 72 + 80 * s
            if data[sect:sect + 16].rstrip(b'\0') == b'__debug_info':
                info = struct.unpack_from('<I', data, sect + 48)[0]
    cursor += size
def uuid(b): h = b.hex().upper(); return f'{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}'
frames = [(uuid(data[uuid_at:uuid_at + 16]), 'Demo')]
for k in range(n):
    b = bytearray(data)
    b[info + 7 + k // 8] ^= 1 << (k % 8)          # abbreviation offset, bytes 7..9 of the CU header
    b[uuid_at + 15] ^= 0xA0 ^ k; b[uuid_at + 14] ^= 0x5A  # its own UUID
    open(f'dsyms/Broken{k}', 'wb').write(b)
    frames.append((uuid(b[uuid_at:uuid_at + 16]), f'Broken{k}'))
def frame(i):
    u, name = frames[i]
    f = {"binaryUUID": u, "binaryName": name, "offsetIntoBinaryTextSegment": 16432, "address": 4295000112,
         "sampleCount": 1}
    if i + 1 < len(frames): f["subFrames"] = [frame(i + 1)]
    return f
print(json.dumps({"timeStampBegin": "2026-11-01 10:00:00 +0000", "timeStampEnd": "2026-11-01 10:00:00 +0000",
  "crashDiagnostics": [{"version": "1.0.0", "diagnosticMetaData": {"appVersion": "1.0", "appBuildVersion": "1",
    "osVersion": "iPhone OS 17.4 (21E219)", "deviceType": "iPhone15,2", "regionFormat": "US",
    "platformArchitecture": "arm64", "bundleIdentifier": app, "exceptionType": 1, "exceptionCode": 0, "signal": 11},
    "callStackTree": {"callStackPerThread": True, "callStacks": [{"threadAttributed": True,
      "callStackRootFrames": [frame(0)]}]}}]}))
PY
    "$BIN" dsym import --db db.sqlite --app $APP Demo.dSYM > /dev/null
    if [ "$N" -gt 0 ]; then "$BIN" dsym import --db db.sqlite --app $APP dsyms/* > /dev/null; fi
    INGEST=$("$BIN" keys create --db db.sqlite --role ingest --app $APP | tail -n 1)
    READ=$("$BIN" keys create --db db.sqlite --role read | tail -n 1)
    "$BIN" serve --db db.sqlite --port "$PORT" --log-level error &
    SERVER=$!
    for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" > /dev/null 2>&1 && break; sleep 0.1; done
    curl -fs -X POST "http://127.0.0.1:$PORT/v1/diagnostics" -H "Authorization: Bearer $INGEST" \
        -H 'Content-Type: application/json' --data-binary @crash.json > /dev/null
    sleep 1
    # The list names each group by its first symbolicated frame: the first symbolication.
    FIRST=$(curl -fs -o list.json -w '%{time_total}' -H "Authorization: Bearer $READ" \
        "http://127.0.0.1:$PORT/v1/apps/$APP/crashes?from=2026-11-01&to=2026-11-01")
    GROUP=$(python3 -c 'import json,sys; print(json.load(open("list.json"))["groups"][0]["id"])')
    TIMES=$(for _ in $(seq "$RUNS"); do
        curl -fs -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $READ" \
            "http://127.0.0.1:$PORT/v1/apps/$APP/crashes/$GROUP"
    done | sort -n)
    TITLE=$(curl -fs -H "Authorization: Bearer $READ" "http://127.0.0.1:$PORT/v1/apps/$APP/crashes/$GROUP" |
        python3 -c 'import json,sys; print(json.load(sys.stdin).get("title"))')
    echo "N=$N list (first symbolication)=${FIRST}s detail: min=$(echo "$TIMES" | head -n 1)s median=$(echo "$TIMES" | sed -n "$((RUNS / 2))p")s" \
        "max=$(echo "$TIMES" | tail -n 1)s title: $TITLE"
    kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=
done
