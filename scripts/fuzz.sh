#!/usr/bin/env bash
# Coverage-guided fuzzing of the MetricKit decoder with libFuzzer + AddressSanitizer.
#
# usage: scripts/fuzz.sh [SECONDS]          (default 60)
#        FUZZ_RUNS=10000000 scripts/fuzz.sh  (a fixed number of executions instead of a time)
#
# Builds Fuzz/DecoderFuzzer.swift together with Sources/LifelineModel into .build-fuzz/decoder-fuzzer
# (outside the SwiftPM build), seeds a corpus from ../shared/fixtures/metrickit (plain, with each
# selector byte, and gzipped) plus the adversarial shapes of `lifeline bench hostile` when a built
# `lifeline` is found, and runs libFuzzer with the MetricKit dictionary. Inputs go up to 1 MiB so
# the size-driven limits are reached. Exits non-zero when libFuzzer finds a crash, leak, timeout
# or out-of-memory input; the input is kept in .build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
out=.build-fuzz
fixtures=../shared/fixtures/metrickit
mkdir -p "$out/corpus" "$out/seeds" "$out/findings"

# 1. Build (about a minute on 2 cores).
if [ ! -x "$out/decoder-fuzzer" ] || [ -n "$(find Sources/LifelineModel Fuzz -newer "$out/decoder-fuzzer" -name '*.swift' | head -1)" ]; then
    echo "fuzz: building $out/decoder-fuzzer"
    swiftc -sanitize=fuzzer,address -O -g -parse-as-library -module-name LifelineModel -package-name lifeline \
        -I Fuzz/CZlib Sources/LifelineModel/*.swift Fuzz/DecoderFuzzer.swift -o "$out/decoder-fuzzer"
fi

# 2. Seeds: every legacy fixture (iOS 27 captures too: they must be refused cleanly), once per
#    selector byte (0 auto, 1 metric, 2 diagnostic, 3 call-stack tree), plain and gzipped.
n=0
while IFS= read -r -d '' file; do
    n=$((n + 1))
    for selector in 0 1 2 3; do
        { printf "\\x0$selector"; cat "$file"; } >"$out/seeds/f$n-$selector"
        { printf "\\x0$selector"; gzip -c "$file"; } >"$out/seeds/f$n-$selector.gz"
    done
done < <(find "$fixtures" -name '*.json' -print0)
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
echo "fuzz: $(ls "$out/seeds" | wc -l) seeds, corpus $(ls "$out/corpus" | wc -l) inputs"

# 3. Run. -rss_limit_mb bounds the whole process (ASan included); -timeout flags any single input
#    taking more than 10 s; -malloc_limit_mb flags a single allocation past 1 GiB.
limit=(-max_total_time="$seconds")
[ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
"$out/decoder-fuzzer" "$out/corpus" "$out/seeds" "${limit[@]}" -max_len=1048576 -len_control=20 \
    -dict=Fuzz/metrickit.dict -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$out/findings/" -close_fd_mask=1
