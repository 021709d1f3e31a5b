#!/usr/bin/env python3
"""Writes one plain-JSON ingest body of about SIZE bytes: an array of distinct reference metric
payloads (from ../shared/bench/make_payloads.py records), for the memory flood of issue 13.

usage: Benchmarks/make_flood_body.py RECORDS.bin OUT.json [--bytes 4000000]
"""
import argparse, gzip, struct

parser = argparse.ArgumentParser()
parser.add_argument("records")
parser.add_argument("out")
parser.add_argument("--bytes", type=int, default=4_000_000)
args = parser.parse_args()
documents, total = [], 2
with open(args.records, "rb") as f:
    while True:
        head = f.read(4)
        if len(head) < 4:
            break
        (n,) = struct.unpack(">I", head)
        doc = gzip.decompress(f.read(n))
        if total + len(doc) + 1 > args.bytes or len(documents) >= 1000:
            break
        documents.append(doc)
        total += len(doc) + 1
with open(args.out, "wb") as f:
    f.write(b"[" + b",".join(documents) + b"]")
print(f"{args.out}: {len(documents)} documents, {total} bytes")
