-- Exit counts packed per cell (issue 25): one row per app, day, version, OS and device holding its
-- exits as three arrays (states, reasons, counts), at both levels. One row per cell, state and
-- reason made the leader's fold insert ~19 rows and their seven-column key per document on the
-- reference load (every document its own fine cell): the largest statement of the fold after the
-- buckets' (BENCHMARKS.md, "Exit counts packed per cell"). A batch's exits are merged into a cell
-- by ll_merge_exits (same state and reason: counts summed; the others added). Counts stay exact.

CREATE FUNCTION ll_merge_exits(
    s1 smallint[], r1 text[], c1 bigint[], s2 smallint[], r2 text[], c2 bigint[],
    OUT states smallint[], OUT reasons text[], OUT counts bigint[])
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(s ORDER BY s, r), array_agg(r ORDER BY s, r), array_agg(c ORDER BY s, r)
    FROM (SELECT s, r, sum(c)::bigint AS c
          FROM (SELECT * FROM unnest(s1, r1, c1) UNION ALL SELECT * FROM unnest(s2, r2, c2)) AS x (s, r, c)
          GROUP BY s, r) AS y
$$;

CREATE TABLE exit_cells (
    app bigint NOT NULL,
    day date NOT NULL,
    version text NOT NULL,
    os text NOT NULL,
    device text NOT NULL,
    states smallint[] NOT NULL,
    reasons text[] NOT NULL,
    counts bigint[] NOT NULL,
    PRIMARY KEY (app, day, version, os, device)
);
CREATE TABLE exit_cells_v (LIKE exit_cells INCLUDING ALL);

INSERT INTO exit_cells (app, day, version, os, device, states, reasons, counts)
SELECT app, day, version, os, device, array_agg(state ORDER BY state, reason), array_agg(reason ORDER BY state, reason),
    array_agg(count ORDER BY state, reason)
FROM exit_rollup GROUP BY app, day, version, os, device;
INSERT INTO exit_cells_v (app, day, version, os, device, states, reasons, counts)
SELECT app, day, version, os, device, array_agg(state ORDER BY state, reason), array_agg(reason ORDER BY state, reason),
    array_agg(count ORDER BY state, reason)
FROM exit_rollup_v GROUP BY app, day, version, os, device;

DROP TABLE exit_rollup;
DROP TABLE exit_rollup_v;
