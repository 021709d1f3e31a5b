-- Signpost totals packed per cell (issue 25), as the exits are (0017): one row per app, day,
-- version, OS and device holding its signposts as three arrays (categories, names, counts), at
-- both levels. One row per cell, category and name was the fold's third insert (~8 rows a
-- document on the reference load). A batch's totals are merged into a cell by ll_merge_signposts
-- (same category and name: counts summed; the others added). Counts stay exact.

CREATE FUNCTION ll_merge_signposts(
    g1 text[], n1 text[], c1 bigint[], g2 text[], n2 text[], c2 bigint[],
    OUT categories text[], OUT names text[], OUT counts bigint[])
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(g ORDER BY g, n), array_agg(n ORDER BY g, n), array_agg(c ORDER BY g, n)
    FROM (SELECT g, n, sum(c)::bigint AS c
          FROM (SELECT * FROM unnest(g1, n1, c1) UNION ALL SELECT * FROM unnest(g2, n2, c2)) AS x (g, n, c)
          GROUP BY g, n) AS y
$$;

CREATE TABLE signpost_cells (
    app bigint NOT NULL,
    day date NOT NULL,
    version text NOT NULL,
    os text NOT NULL,
    device text NOT NULL,
    categories text[] NOT NULL,
    names text[] NOT NULL,
    counts bigint[] NOT NULL,
    PRIMARY KEY (app, day, version, os, device)
);
CREATE TABLE signpost_cells_v (LIKE signpost_cells INCLUDING ALL);

INSERT INTO signpost_cells (app, day, version, os, device, categories, names, counts)
SELECT app, day, version, os, device, array_agg(category ORDER BY category, name), array_agg(name ORDER BY category, name),
    array_agg(count ORDER BY category, name)
FROM signpost_rollup GROUP BY app, day, version, os, device;
INSERT INTO signpost_cells_v (app, day, version, os, device, categories, names, counts)
SELECT app, day, version, os, device, array_agg(category ORDER BY category, name), array_agg(name ORDER BY category, name),
    array_agg(count ORDER BY category, name)
FROM signpost_rollup_v GROUP BY app, day, version, os, device;

DROP TABLE signpost_rollup;
DROP TABLE signpost_rollup_v;
