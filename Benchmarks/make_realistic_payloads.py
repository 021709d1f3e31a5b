#!/usr/bin/env python3
"""Reference-shaped metric payloads with a realistic cardinality, for comparison with
../shared/bench/make_payloads.py.

The shared reference load draws every histogram's bucket widths, the OS build number and one of
28 versions at random, so nearly every payload is its own rollup cell — the worst case for
Lifeline's rollups. Real MetricKit histograms have fixed bucket bounds per metric, an OS version
has one or two builds, and an app has a handful of live versions. This script keeps the shared
payload's size and sections (~16 KB JSON, exits of every reason, launch/hang histograms,
signposts) but uses fixed bucket layouts, 7 OS builds, 7 versions and 2 days.

usage: make_realistic_payloads.py N OUT.bin [--bundle com.example.app] [--seed 1]
OUT.bin has the same format as make_payloads.py ([4-byte big-endian length][gzip body]).
"""
import argparse, gzip, json, random, struct

LAYOUTS = {  # fixed bucket bounds per histogram, like MetricKit's
    "ttfd": [(s, s + 100) for s in range(200, 1600, 100)],
    "resume": [(s, s + 50) for s in range(0, 500, 50)],
    "optimized": [(s, s + 100) for s in range(150, 950, 100)],
    "extended": [(s, s + 200) for s in range(300, 1500, 200)],
    "hang": [(s, s + 250) for s in range(250, 4250, 250)],
    "bars": [(b, b) for b in range(0, 4)],
    "signpost": [(0, 50), (50, 100), (100, 200), (200, 500), (500, 1000)],
}

def hist(rng, layout, unit):
    buckets = LAYOUTS[layout]
    vals = {str(i): {"bucketStart": f"{a:,} {unit}", "bucketEnd": f"{b:,} {unit}", "bucketCount": rng.randint(1, 5000)}
            for i, (a, b) in enumerate(buckets)}
    keys = list(vals); rng.shuffle(keys)
    return {"histogramNumBuckets": len(buckets), "histogramValue": {k: vals[k] for k in keys}}

def payload(rng, i, bundle):
    day = 1 + i % 2
    fg = ["NormalApp", "MemoryResourceLimit", "BadAccess", "Abnormal", "IllegalInstruction", "AppWatchdog", "CPUResourceLimit"]
    bg = ["NormalApp", "MemoryResourceLimit", "CPUResourceLimit", "MemoryPressure", "BadAccess", "Abnormal",
          "IllegalInstruction", "AppWatchdog", "SuspendedWithLockedFile", "BackgroundTaskAssertionTimeout",
          "BackgroundURLSessionCompletionTimeout", "BackgroundFetchCompletionTimeout"]
    entered = rng.randint(0, 30)
    minor = rng.randint(0, 6)
    return {
        "appVersion": f"4.{rng.randint(0, 6)}.0",
        "timeStampBegin": f"2026-10-{day:02d} 00:00:00 +0000", "timeStampEnd": f"2026-10-{day:02d} 23:59:00 +0000",
        "metaData": {"appBuildVersion": str(rng.randint(1000, 9999)), "osVersion": f"iPhone OS 17.{minor} (21E{200 + minor})",
                     "regionFormat": rng.choice(["US", "GB", "DE", "JP"]), "platformArchitecture": "arm64e",
                     "deviceType": f"iPhone15,{rng.randint(1, 5)}", "bundleIdentifier": bundle,
                     "isTestFlightApp": False, "lowPowerModeEnabled": rng.random() < 0.2, "pid": rng.randint(100, 99999)},
        "applicationExitMetrics": {
            "foregroundExitData": {f"cumulative{r}ExitCount": rng.randint(0, 9) for r in fg},
            "backgroundExitData": {f"cumulative{r}ExitCount": rng.randint(0, 20) for r in bg}},
        "applicationLaunchMetrics": {"histogrammedTimeToFirstDrawKey": hist(rng, "ttfd", "ms"),
                                     "histogrammedResumeTime": hist(rng, "resume", "ms"),
                                     "histogrammedOptimizedTimeToFirstDrawKey": hist(rng, "optimized", "ms"),
                                     "histogrammedExtendedLaunch": hist(rng, "extended", "ms")},
        "applicationResponsivenessMetrics": {"histogrammedAppHangTime": hist(rng, "hang", "ms")},
        "applicationTimeMetrics": {"cumulativeForegroundTime": f"{rng.randint(0, 20000):,} sec",
                                   "cumulativeBackgroundTime": f"{rng.randint(0, 40000):,} sec",
                                   "cumulativeBackgroundAudioTime": "0 sec", "cumulativeBackgroundLocationTime": "0 sec"},
        "cpuMetrics": {"cumulativeCPUTime": f"{rng.randint(10, 99999):,} sec",
                       "cumulativeCPUInstructions": f"{rng.randint(10**6, 10**9):,} kiloinstructions"},
        "gpuMetrics": {"cumulativeGPUTime": f"{rng.randint(1, 9999):,} sec"},
        "memoryMetrics": {"peakMemoryUsage": f"{rng.randint(10**4, 10**6):,} kB",
                          "averageSuspendedMemory": {"averageValue": f"{rng.randint(1000, 99999):,} kB",
                                                     "standardDeviation": round(rng.random() * 5000, 3), "sampleCount": rng.randint(1, 900)}},
        "diskIOMetrics": {"cumulativeLogicalWrites": f"{rng.randint(10, 10**6):,} kB"},
        "networkTransferMetrics": {k: f"{rng.randint(0, 10**6):,} kB" for k in
                                   ["cumulativeCellularDownload", "cumulativeWifiDownload", "cumulativeCellularUpload", "cumulativeWifiUpload"]},
        "cellularConditionMetrics": {"cellConditionTime": hist(rng, "bars", "bars")},
        "displayMetrics": {"averagePixelLuminance": {"averageValue": f"{rng.randint(1, 99)} apl", "standardDeviation": 0, "sampleCount": rng.randint(1, 500)}},
        "animationMetrics": {"scrollHitchTimeRatio": f"{rng.randint(0, 20)} ms per s"},
        "signpostMetrics": [
            {"signpostCategory": "ExpirationHandlers", "signpostName": "DatabaseExpirationHandlerEntered", "totalSignpostCount": entered},
            {"signpostCategory": "ExpirationHandlers", "signpostName": "DatabaseExpirationHandlerExited", "totalSignpostCount": entered - rng.randint(0, min(2, entered))},
            {"signpostCategory": "StateRestoration", "signpostName": "RestoreAttempt", "totalSignpostCount": rng.randint(1, 60),
             "signpostIntervalData": {"histogrammedSignpostDurations": hist(rng, "signpost", "ms"),
                                      "signpostCumulativeCPUTime": f"{rng.randint(1, 9999):,} ms",
                                      "signpostAverageMemory": f"{rng.randint(1, 99999):,} kB",
                                      "signpostCumulativeLogicalWrites": f"{rng.randint(1, 9999):,} kB"}},
            {"signpostCategory": "StateRestoration", "signpostName": "RestoreFailed", "totalSignpostCount": 1 if rng.random() < 0.05 else 0},
        ] + [{"signpostCategory": f"Feature{j % 3}", "signpostName": f"Work{j}", "totalSignpostCount": rng.randint(1, 999),
              "signpostIntervalData": {"histogrammedSignpostDurations": hist(rng, "signpost", "ms"),
                                       "signpostCumulativeCPUTime": f"{rng.randint(1, 9999):,} ms"}} for j in range(4)],
    }

ap = argparse.ArgumentParser()
ap.add_argument("n", type=int); ap.add_argument("out")
ap.add_argument("--bundle", default="com.example.app"); ap.add_argument("--seed", type=int, default=1)
a = ap.parse_args()
rng = random.Random(a.seed)
raw_total = gz_total = 0
with open(a.out, "wb") as out:
    for i in range(a.n):
        raw = json.dumps(payload(rng, i, a.bundle), indent=2).encode()
        gz = gzip.compress(raw, 6)
        raw_total += len(raw); gz_total += len(gz)
        out.write(struct.pack(">I", len(gz))); out.write(gz)
print(f"{a.n} payloads, mean {raw_total // a.n} B JSON, {gz_total // a.n} B gzip -> {a.out}")
