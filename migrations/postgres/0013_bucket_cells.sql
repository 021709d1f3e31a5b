-- Histogram buckets packed per cell (issue 25): one row per app, day, version, OS, device and
-- histogram source, holding its buckets as three sorted arrays (starts, ends, counts), at both
-- levels. One row per bucket made the fold upsert ~58 rows per document on the reference load
-- (every document brings its own bounds), and those upserts were the fold's whole cost: the
-- leader folded ~250 documents/s behind a door taking ~1,100/s. A batch's buckets are merged into
-- a cell by ll_merge_buckets (same bounds: counts summed; new bounds: added in order). Sample
-- counts and bounds stay exact: no bucket is ever merged with a neighbour.

CREATE FUNCTION ll_merge_buckets(
    s1 double precision[], e1 double precision[], c1 bigint[],
    s2 double precision[], e2 double precision[], c2 bigint[],
    OUT starts double precision[], OUT ends double precision[], OUT counts bigint[])
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(s ORDER BY s, e), array_agg(e ORDER BY s, e), array_agg(c ORDER BY s, e)
    FROM (SELECT s, e, sum(c)::bigint AS c
          FROM (SELECT * FROM unnest(s1, e1, c1) UNION ALL SELECT * FROM unnest(s2, e2, c2)) AS x (s, e, c)
          GROUP BY s, e) AS y
$$;

CREATE TABLE bucket_cells (
    app bigint NOT NULL,
    day date NOT NULL,
    version text NOT NULL,
    os text NOT NULL,
    device text NOT NULL,
    source text NOT NULL,
    starts double precision[] NOT NULL,
    ends double precision[] NOT NULL,
    counts bigint[] NOT NULL,
    PRIMARY KEY (app, day, version, os, device, source)
);
CREATE TABLE bucket_cells_v (LIKE bucket_cells INCLUDING ALL);

INSERT INTO bucket_cells (app, day, version, os, device, source, starts, ends, counts)
SELECT app, day, version, os, device, source, array_agg(bucket_start ORDER BY bucket_start, bucket_end),
    array_agg(bucket_end ORDER BY bucket_start, bucket_end), array_agg(count ORDER BY bucket_start, bucket_end)
FROM bucket_rollup GROUP BY app, day, version, os, device, source;
INSERT INTO bucket_cells_v (app, day, version, os, device, source, starts, ends, counts)
SELECT app, day, version, os, device, source, array_agg(bucket_start ORDER BY bucket_start, bucket_end),
    array_agg(bucket_end ORDER BY bucket_start, bucket_end), array_agg(count ORDER BY bucket_start, bucket_end)
FROM bucket_rollup_v GROUP BY app, day, version, os, device, source;

DROP TABLE bucket_rollup;
DROP TABLE bucket_rollup_v;
