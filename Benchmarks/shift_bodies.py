#!/usr/bin/env python3
"""Rewrites a make_payloads.py body file (4-byte big-endian length + gzip JSON per record) so every
payload's days move from one month to another: `shift_bodies.py IN OUT 2026-10- 2026-11-`.
Used by prune-under-load.sh to ingest into recent days while old ones are pruned."""
import gzip
import struct
import sys


def main() -> None:
    source, target, old, new = sys.argv[1:5]
    old_b, new_b = old.encode(), new.encode()
    with open(source, "rb") as f, open(target, "wb") as out:
        while header := f.read(4):
            (length,) = struct.unpack(">I", header)
            body = gzip.decompress(f.read(length)).replace(old_b, new_b)
            packed = gzip.compress(body, compresslevel=6, mtime=0)
            out.write(struct.pack(">I", len(packed)) + packed)


if __name__ == "__main__":
    main()
