#!/usr/bin/env python3
"""Posts adversarial bodies to a Lifeline server in a loop, from several threads, for a fixed time.

usage: hostile_client.py URL KEY SECONDS THREADS BODY_FILE [BODY_FILE ...]

Each thread cycles through the body files (identity encoding), and the script prints one line per
body file: requests, statuses seen, median and max latency. Traffic goes only to URL (loopback).
"""
import http.client
import statistics
import sys
import threading
import time
import urllib.parse

url, key, seconds, threads = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
paths = sys.argv[5:]
bodies = [(p, open(p, "rb").read()) for p in paths]
target = urllib.parse.urlparse(url)
assert target.hostname in ("127.0.0.1", "localhost", "::1"), "loopback only"
results = {p: [] for p in paths}
lock = threading.Lock()
deadline = time.monotonic() + seconds


def worker(offset):
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=120)
    i = offset
    while time.monotonic() < deadline:
        path, body = bodies[i % len(bodies)]
        i += 1
        start = time.monotonic()
        try:
            connection.request("POST", target.path, body=body, headers={
                "Authorization": "Bearer " + key, "Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            status = response.status
        except Exception as error:  # a reset connection is a finding too
            status = type(error).__name__
            connection = http.client.HTTPConnection(target.hostname, target.port, timeout=120)
        with lock:
            results[path].append((status, time.monotonic() - start))


pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
for t in pool:
    t.start()
for t in pool:
    t.join()
for path, rows in results.items():
    if not rows:
        print(f"{path}: no request completed")
        continue
    statuses = sorted({str(s) for s, _ in rows})
    latencies = [l for _, l in rows]
    print(f"{path.split('/')[-1]}: {len(rows)} requests, statuses {','.join(statuses)}, "
          f"median {statistics.median(latencies) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms")
