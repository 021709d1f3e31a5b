#!/usr/bin/env bash
# Coverage-guided fuzzing of the MetricKit decoder with libFuzzer + AddressSanitizer.
#
# usage: scripts/fuzz.sh [SECONDS]          (default 60)
#        FUZZ_RUNS=10000000 scripts/fuzz.sh  (a fixed number of executions instead of a time)
#
# Builds Fuzz/DecoderFuzzer.swift together with every Swift file under Sources/LifelineModel (one module, outside
# the SwiftPM build) into .build-fuzz/decoder-fuzzer, seeds a corpus from ../shared/fixtures/metrickit
# (plain, once per selector byte, and gzipped) plus the adversarial shapes of `lifeline bench hostile`
# when a built `lifeline` is found, and runs libFuzzer with Fuzz/metrickit.dict. Exits non-zero when
# libFuzzer fails or leaves a crash, leak, timeout or out-of-memory input in .build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
out=.build-fuzz
fixtures=../shared/fixtures/metrickit
rm -rf "$out/seeds"  # regenerated each run; the corpus keeps what libFuzzer found
mkdir -p "$out/corpus" "$out/seeds" "$out/findings"

# 1. Build (a minute or two on 2 cores) when missing or older than a source. Linked to a temporary
#    name and renamed, so a fuzzer already running from the old binary is left alone.
if [ ! -x "$out/decoder-fuzzer" ] || [ -n "$(find Sources/LifelineModel Fuzz -newer "$out/decoder-fuzzer" \
    \( -name '*.swift' -o -name '*.h' -o -name '*.modulemap' \) | head -1)" ]; then
    echo "fuzz: building $out/decoder-fuzzer"
    mapfile -t model < <(find Sources/LifelineModel -name '*.swift' | sort)
    swiftc -sanitize=fuzzer,address -O -g -parse-as-library -module-name LifelineModel -package-name lifeline \
        -I Fuzz/CZlib "${model[@]}" Fuzz/DecoderFuzzer.swift -o "$out/decoder-fuzzer.tmp"
    mv -f "$out/decoder-fuzzer.tmp" "$out/decoder-fuzzer"
fi

# 2. Seeds: every fixture (the iOS 27 captures too: they must be refused cleanly) as is, once per
#    selector byte (0 auto, 1 metric, 2 diagnostic, 3 call-stack tree), and gzipped after each byte.
[ -d "$fixtures" ] || echo "fuzz: $fixtures not found, seeding from the corpus only" >&2
n=0
while IFS= read -r -d '' file; do
    n=$((n + 1))
    cp "$file" "$out/seeds/f$n"
    for selector in 0 1 2 3; do
        { printf "\\x0$selector"; cat "$file"; } >"$out/seeds/f$n-$selector"
        { printf "\\x0$selector"; gzip -c "$file"; } >"$out/seeds/f$n-$selector.gz"
    done
done < <([ -d "$fixtures" ] && find "$fixtures" -name '*.json' -print0 | sort -z)
lifeline=""
for candidate in .build/release/lifeline .build/debug/lifeline; do
    [ -x "$candidate" ] && lifeline="$candidate" && break
done
if [ -n "$lifeline" ]; then
    for shape in long-key repeated-exit-keys deep-flame empty-frames escaped-leaves many-buckets dense-documents; do
        "$lifeline" bench hostile --one "$shape" --size 60000 --write-body "$out/shape.json" 2>/dev/null || continue
        { printf '\x00'; cat "$out/shape.json"; } >"$out/seeds/shape-$shape"
    done
fi
[ -n "$(ls -A "$out/seeds" "$out/corpus")" ] || printf '\x00{}' >"$out/seeds/empty-object"
echo "fuzz: $(ls "$out/seeds" | wc -l) seeds, corpus $(ls "$out/corpus" | wc -l) inputs"

# 3. Run. Inputs up to 1 MiB; -len_control=20 lets the length limit grow ten times faster than
#    libFuzzer's default (100) so the size-driven decoder limits are reached within a short run.
#    -rss_limit_mb bounds the process (ASan included), -malloc_limit_mb one allocation, -timeout one input.
limit=(-max_total_time="$seconds")
[ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
before=$(ls "$out/findings" | wc -l)
status=0
"$out/decoder-fuzzer" "$out/corpus" "$out/seeds" "${limit[@]}" -max_len=1048576 -len_control=20 \
    -dict=Fuzz/metrickit.dict -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$out/findings/" -close_fd_mask=1 || status=$?
after=$(ls "$out/findings" | wc -l)
if [ "$status" -ne 0 ] || [ "$after" -gt "$before" ]; then
    echo "fuzz: FAILED (libFuzzer exit $status); findings in $out/findings/:" >&2
    ls -lt "$out/findings" >&2
    exit 1
fi
echo "fuzz: no findings"
