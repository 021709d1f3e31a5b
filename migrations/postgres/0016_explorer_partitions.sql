-- The explorer's cells partitioned by category (one partition per category, '' and anything else
-- in the default one), at both levels. Rows of every category of a cell are written together by a
-- fold, so a table ordered by anything shares each page between categories: the fine-level query
-- "memory by OS and device" read every row of the days asked for (a sequential scan of the whole
-- table, 28 ms of 50 over 200,000 payloads) to keep one in seven. A partition holds one category's
-- rows only, and the planner reads the partitions of the categories asked for (BENCHMARKS.md, "The
-- explorer's rows partitioned by category").
ALTER TABLE explorer_cells RENAME TO explorer_cells_unpartitioned;
ALTER TABLE explorer_cells_v RENAME TO explorer_cells_v_unpartitioned;
ALTER TABLE explorer_cells_unpartitioned RENAME CONSTRAINT explorer_cells_pkey TO explorer_cells_unpartitioned_pkey;
ALTER TABLE explorer_cells_v_unpartitioned RENAME CONSTRAINT explorer_cells_v_pkey
    TO explorer_cells_v_unpartitioned_pkey;

CREATE TABLE explorer_cells (
    app bigint NOT NULL,
    day date NOT NULL,
    version text NOT NULL,
    os text NOT NULL,
    device text NOT NULL,
    app_state text NOT NULL,
    category text NOT NULL DEFAULT '',
    cells bytea NOT NULL,
    PRIMARY KEY (app, day, version, os, device, app_state, category)
) PARTITION BY LIST (category);
CREATE TABLE explorer_cells_launch PARTITION OF explorer_cells FOR VALUES IN ('launch');
CREATE TABLE explorer_cells_hang PARTITION OF explorer_cells FOR VALUES IN ('hang');
CREATE TABLE explorer_cells_memory PARTITION OF explorer_cells FOR VALUES IN ('memory');
CREATE TABLE explorer_cells_disk PARTITION OF explorer_cells FOR VALUES IN ('disk');
CREATE TABLE explorer_cells_battery PARTITION OF explorer_cells FOR VALUES IN ('battery');
CREATE TABLE explorer_cells_animation PARTITION OF explorer_cells FOR VALUES IN ('animation');
CREATE TABLE explorer_cells_termination PARTITION OF explorer_cells FOR VALUES IN ('termination');
CREATE TABLE explorer_cells_other PARTITION OF explorer_cells DEFAULT;

CREATE TABLE explorer_cells_v (LIKE explorer_cells INCLUDING ALL) PARTITION BY LIST (category);
CREATE TABLE explorer_cells_v_launch PARTITION OF explorer_cells_v FOR VALUES IN ('launch');
CREATE TABLE explorer_cells_v_hang PARTITION OF explorer_cells_v FOR VALUES IN ('hang');
CREATE TABLE explorer_cells_v_memory PARTITION OF explorer_cells_v FOR VALUES IN ('memory');
CREATE TABLE explorer_cells_v_disk PARTITION OF explorer_cells_v FOR VALUES IN ('disk');
CREATE TABLE explorer_cells_v_battery PARTITION OF explorer_cells_v FOR VALUES IN ('battery');
CREATE TABLE explorer_cells_v_animation PARTITION OF explorer_cells_v FOR VALUES IN ('animation');
CREATE TABLE explorer_cells_v_termination PARTITION OF explorer_cells_v FOR VALUES IN ('termination');
CREATE TABLE explorer_cells_v_other PARTITION OF explorer_cells_v DEFAULT;

INSERT INTO explorer_cells (app, day, version, os, device, app_state, category, cells)
    SELECT app, day, version, os, device, app_state, category, cells FROM explorer_cells_unpartitioned;
INSERT INTO explorer_cells_v (app, day, version, os, device, app_state, category, cells)
    SELECT app, day, version, os, device, app_state, category, cells FROM explorer_cells_v_unpartitioned;
DROP TABLE explorer_cells_unpartitioned;
DROP TABLE explorer_cells_v_unpartitioned;
