-- Exit counts per app, day, OS and device (issue 25): a third level of exit cells, beside the
-- fine cells (day, version, OS, device) and the version level (`exit_cells_v`), for a scope that
-- groups or filters by OS or device and neither filters nor groups by version. "Exits by OS and
-- device" over 30 days read every fine cell of the range (7,350 in the benchmark: 30 days × 7
-- versions × 7 OS versions × 5 devices): 15 ms sent one row per cell, 9–12 ms grouped by the
-- server (7 ms of it the grouping); at this level it reads one row per day, OS and device (1,050).
-- The version column is '' here. The leader's fold writes the level beside the other two, in the
-- same transaction.

CREATE TABLE exit_cells_od (LIKE exit_cells INCLUDING ALL);

INSERT INTO exit_cells_od (app, day, version, os, device, states, reasons, counts)
SELECT app, day, '', os, device, array_agg(s ORDER BY s, r), array_agg(r ORDER BY s, r), array_agg(c ORDER BY s, r)
FROM (
    SELECT app, day, os, device, e.s, e.r, sum(e.c)::bigint AS c
    FROM exit_cells, unnest(states, reasons, counts) AS e (s, r, c)
    GROUP BY app, day, os, device, e.s, e.r
) AS x
GROUP BY app, day, os, device;
