#!/usr/bin/env python3
"""Write N distinct iOS 27 MetricReport documents ("version": "2.0.0", gzipped) for load tests:
the 2.0.0 variant of ../shared/bench/make_payloads.py's reference load, read by the same load.lua.

usage: make_v2_payloads.py N OUT.bin [--bundle com.example.app] [--seed 1]

Each report holds what a real one does (METRICKIT-27.md, the ios27/ captures): a full-day interval
entry with every metric (terminations with explicit zeros, 4 launch histograms and the hang
histogram of 14-16 buckets, app time, CPU, memory, disk, network, cellular, luminance, 4 signpost
interval metrics including an expiration-handler pair and state restoration), eight 3-hour slices
of resource metrics, and three app states (two screens and an experiment arm) with their own
terminations, hangs and launches. Days 2026-10-01 … 28 as in the legacy load.
"""
import argparse
import gzip
import json
import random
import struct

REFERENCE = 978_307_200  # 2001-01-01 in Unix time
FG = ["normal", "memoryLimit", "badAccess", "abnormal", "illegalInstruction", "watchdog"]
BG = FG + ["highCPU", "systemPressure", "fileLock", "taskTimeout"]


def m(value, unit):
    return {"value": value, "unit": unit}


def hist(rng, n, start=0):
    buckets, s = [], start
    for _ in range(n):
        w = rng.choice([10, 20, 50, 100])
        buckets.append({"count": rng.randint(1, 5000), "lowerBound": m(s, "ms"), "upperBound": m(s + w - 1, "ms")})
        s += w
    return {"histogram": {"buckets": buckets}}


def terminations(rng, names, high):
    return {f"{name}TerminationCount": rng.randint(0, high) for name in names}


def resources(rng):
    return [
        {"cpuTimeMetric": {"value": m(rng.randint(10, 9999), "s")}},
        {"cpuInstructionsCountMetric": {"value": rng.randint(10**9, 10**13)}},
        {"gpuTimeMetric": {"value": m(rng.randint(0, 999), "s")}},
        {"peakMemoryMetric": {"value": m(round(rng.uniform(10, 900), 3), "MB")}},
        {"suspendedMemoryMetric": {"value": {"average": m(round(rng.uniform(5, 90), 3), "MB"), "count": rng.randint(1, 900),
                                             "standardDeviation": round(rng.random() * 5, 3)}}},
        {"logicalDiskWritesMetric": {"value": m(round(rng.uniform(0, 2000), 3), "MB")}},
        {"totalWiFiUploadMetric": {"value": m(round(rng.uniform(0, 50), 3), "MB")}},
        {"totalWiFiDownloadMetric": {"value": m(round(rng.uniform(0, 500), 3), "MB")}},
        {"totalCellularUploadMetric": {"value": m(round(rng.uniform(0, 20), 3), "MB")}},
        {"totalCellularDownloadMetric": {"value": m(round(rng.uniform(0, 200), 3), "MB")}},
        {"totalForegroundTimeMetric": {"value": m(rng.randint(0, 20000), "s")}},
        {"totalBackgroundTimeMetric": {"value": m(rng.randint(0, 40000), "s")}},
    ]


def signposts(rng):
    entered = rng.randint(0, 30)
    attempts = rng.randint(1, 60)
    items = [
        {"signpostIntervalMetric": {"signpostCategory": "ExpirationHandlers", "signpostName": "DatabaseExpirationHandlerEntered",
                                    "totalCount": entered}},
        {"signpostIntervalMetric": {"signpostCategory": "ExpirationHandlers", "signpostName": "DatabaseExpirationHandlerExited",
                                    "totalCount": entered - rng.randint(0, min(2, entered))}},
        {"signpostIntervalMetric": {"signpostCategory": "StateRestoration", "signpostName": "RestoreAttempt", "totalCount": attempts,
                                    "signpostDuration": hist(rng, 5)["histogram"], "cpuTime": m(rng.randint(1, 9999), "ms")}},
        {"signpostIntervalMetric": {"signpostCategory": "StateRestoration", "signpostName": "RestoreFailed",
                                    "totalCount": 1 if rng.random() < 0.05 else 0}},
    ]
    return items


def state(domain, label, seconds, metadata=None):
    return {"domain": domain, "label": label, "duration": m(seconds, "s"), "stableMetadata": metadata or {}}


def report(rng, i, bundle):
    day = 1 + i % 28
    begin = 1_790_812_800 + (day - 1) * 86_400 - REFERENCE  # 2026-10-<day> 00:00 UTC
    states = [
        state("com.example.screen", "home", rng.randint(1000, 86400)),
        state("com.example.screen", "checkout", rng.randint(100, 20000), {"userTier": {"string": rng.choice(["free", "premium"])}}),
        state("com.example.experiment.checkout_redesign", rng.choice(["control", "variant_b"]), 86400),
    ]
    full = resources(rng) + [
        {"hangTimeMetric": hist(rng, 16, 250)},
        {"foregroundTerminationMetric": terminations(rng, FG, 9)},
        {"backgroundTerminationMetric": terminations(rng, BG, 20)},
        {"timeToFirstDrawMetric": hist(rng, 14, 200)},
        {"applicationResumeTimeMetric": hist(rng, 10)},
        {"optimizedTimeToFirstDrawMetric": hist(rng, 8, 150)},
        {"extendedLaunchMetric": hist(rng, 6, 300)},
        {"cellularConditionTimeMetric": {"histogram": {"buckets": [
            {"count": rng.randint(0, 99), "lowerBound": m(b, "bars"), "upperBound": m(b, "bars")} for b in range(4)]}}},
        {"pixelLuminanceMetric": {"value": {"average": m(rng.randint(1, 99), "apl"), "count": rng.randint(1, 500)}}},
    ] + signposts(rng)
    slices = [{"duration": m(10800, "s"), "states": [], "values": resources(rng)} for _ in range(8)]
    state_entries = [
        {"state": s, "values": [
            {"hangTimeMetric": hist(rng, 3, 250)},
            {"foregroundTerminationMetric": terminations(rng, FG, 3)},
            {"backgroundTerminationMetric": terminations(rng, BG, 3)},
            {"timeToFirstDrawMetric": hist(rng, 4, 200)},
        ]} for s in states
    ]
    return {
        "version": "2.0.0",
        "timeRange": {"begin": begin, "end": begin + 86_400},
        "environment": {
            "bundleIdentifier": bundle, "latestApplicationVersion": f"4.{rng.randint(0, 6)}.{rng.randint(0, 3)}",
            "applicationBuildVersion": str(rng.randint(1000, 9999)), "includesMultipleApplicationVersions": False,
            "deviceType": f"iPhone17,{rng.randint(1, 5)}",
            "osVersion": {"platform": "iPhone OS", "number": f"27.{rng.randint(0, 2)}", "buildNumber": f"24A{rng.randint(100, 999)}"},
            "platformArchitecture": "arm64e", "regionFormat": rng.choice(["US", "GB", "DE", "JP"]),
            "isTestFlightApp": False, "lowPowerModeEnabled": rng.random() < 0.2, "hasExceededStateLimit": False,
        },
        "intervalEntries": [{"duration": m(86400, "s"), "states": states, "values": full}] + slices,
        "stateEntries": state_entries,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--bundle", default="com.example.app")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    raw_total = gz_total = 0
    with open(a.out, "wb") as out:
        for i in range(a.n):
            raw = json.dumps(report(rng, i, a.bundle), separators=(",", ":")).encode()
            gz = gzip.compress(raw, 6)
            raw_total += len(raw)
            gz_total += len(gz)
            out.write(struct.pack(">I", len(gz)))
            out.write(gz)
    print(f"{a.n} reports, mean {raw_total // a.n} B JSON, {gz_total // a.n} B gzip -> {a.out}")


if __name__ == "__main__":
    main()
