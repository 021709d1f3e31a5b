-- The explorer's cells packed per cell AND category (launch, hang, memory, disk, battery,
-- animation, termination), as SQLite's migration 0016 does: a query for one category reads only
-- that category's rows instead of whole rows of every metric (the fine-level query "memory by OS
-- and device" over 1,000,000 payloads took 370 ms reading whole rows; BENCHMARKS.md, "The explorer
-- packed per category").
-- Rows written before keep every metric of their cell under category '' and are still read (with
-- the wanted categories' rows, filtered per entry as before); `lifeline refold` rewrites them.
ALTER TABLE explorer_cells ADD COLUMN category text NOT NULL DEFAULT '';
ALTER TABLE explorer_cells DROP CONSTRAINT explorer_cells_pkey;
ALTER TABLE explorer_cells ADD PRIMARY KEY (app, day, version, os, device, app_state, category);

ALTER TABLE explorer_cells_v ADD COLUMN category text NOT NULL DEFAULT '';
ALTER TABLE explorer_cells_v DROP CONSTRAINT explorer_cells_v_pkey;
ALTER TABLE explorer_cells_v ADD PRIMARY KEY (app, day, version, os, device, app_state, category);
