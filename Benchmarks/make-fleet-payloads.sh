#!/usr/bin/env bash
# A fleet-like ingest load for the wrk scripts: `lifeline simulate --out` plays DEVICES devices over
# DAYS days (versions adopted progressively, OS versions and models mixed, one metric payload per
# device-day), and the metric payloads are packed in day order (as a fleet sends them: each day's
# reports arrive together) into records of [4-byte big-endian length][gzip body], the format of
# ../shared/bench/make_payloads.py that load.lua reads. The reference load (make_payloads.py) is
# the explorer's worst case instead: every payload its own OS build and bucket layout, and
# consecutive payloads on different days.
#
# usage: Benchmarks/make-fleet-payloads.sh OUT.bin   (env: BIN, DEVICES=4000, DAYS=20, SEED=11)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: make-fleet-payloads.sh OUT.bin}"
bin="${BIN:-.build/release/lifeline}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$bin" simulate --app com.example.app --out "$work" --devices "${DEVICES:-4000}" --days "${DAYS:-20}" \
    --versions 4.0.0,4.1.0,4.2.0,4.3.0,4.4.0 --seed "${SEED:-11}" >/dev/null
python3 - "$work" "$out" <<'PY'
import glob, os, struct, sys
files = sorted(glob.glob(os.path.join(sys.argv[1], "*", "*-metric.json.gz")))
total = 0
with open(sys.argv[2], "wb") as out:
    for path in files:
        body = open(path, "rb").read()
        out.write(struct.pack(">I", len(body)))
        out.write(body)
        total += len(body)
print(f"{len(files)} metric payloads, {total // max(1, len(files))} B gzip on average -> {sys.argv[2]}")
PY
