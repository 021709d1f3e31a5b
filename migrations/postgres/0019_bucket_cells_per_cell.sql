-- Histogram buckets packed one row per cell (issue 25): every histogram source of an app, day,
-- version, OS and device in one row, at both levels: the cell's sources (sorted), the number of
-- buckets of each (lengths), and the buckets of all its sources end to end, in the same order,
-- each source's sorted by bounds (starts, ends, counts). One row per cell and source made the
-- leader's fold write ~11 rows and their keys per document on the reference load (every document
-- its own fine cell): half of the fold's statement time (BENCHMARKS.md, "Histogram buckets packed
-- per cell"). Counts and bounds stay exact. ll_merge_buckets, unused since the leader merges
-- buckets in Swift, goes.

CREATE TABLE bucket_cells_packed (
    app bigint NOT NULL,
    day date NOT NULL,
    version text NOT NULL,
    os text NOT NULL,
    device text NOT NULL,
    sources text[] NOT NULL,
    lengths integer[] NOT NULL,
    starts double precision[] NOT NULL,
    ends double precision[] NOT NULL,
    counts bigint[] NOT NULL,
    PRIMARY KEY (app, day, version, os, device)
);
CREATE TABLE bucket_cells_packed_v (LIKE bucket_cells_packed INCLUDING ALL);

INSERT INTO bucket_cells_packed (app, day, version, os, device, sources, lengths, starts, ends, counts)
SELECT app, day, version, os, device, array_agg(source ORDER BY source, n) FILTER (WHERE n = 1),
    array_agg(cardinality(counts) ORDER BY source, n) FILTER (WHERE n = 1), array_agg(s ORDER BY source, n),
    array_agg(e ORDER BY source, n), array_agg(c ORDER BY source, n)
FROM bucket_cells CROSS JOIN LATERAL unnest(starts, ends, counts) WITH ORDINALITY AS x (s, e, c, n)
GROUP BY app, day, version, os, device;
INSERT INTO bucket_cells_packed_v (app, day, version, os, device, sources, lengths, starts, ends, counts)
SELECT app, day, version, os, device, array_agg(source ORDER BY source, n) FILTER (WHERE n = 1),
    array_agg(cardinality(counts) ORDER BY source, n) FILTER (WHERE n = 1), array_agg(s ORDER BY source, n),
    array_agg(e ORDER BY source, n), array_agg(c ORDER BY source, n)
FROM bucket_cells_v CROSS JOIN LATERAL unnest(starts, ends, counts) WITH ORDINALITY AS x (s, e, c, n)
GROUP BY app, day, version, os, device;

DROP TABLE bucket_cells;
DROP TABLE bucket_cells_v;
ALTER TABLE bucket_cells_packed RENAME TO bucket_cells;
ALTER TABLE bucket_cells_packed_v RENAME TO bucket_cells_v;
DROP FUNCTION ll_merge_buckets;

-- A version-level row holds every bucket of its version-day (~8 KB on the reference load): kept
-- inline up to a page, not compressed and moved to the TOAST table at the default ~2 KB, which
-- made every fold's rewrite of those rows cost several times the fine rows' (BENCHMARKS.md).
ALTER TABLE bucket_cells SET (toast_tuple_target = 8160);
ALTER TABLE bucket_cells_v SET (toast_tuple_target = 8160);
