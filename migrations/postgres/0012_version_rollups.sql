-- Version-level cells (issue 25): the rollups once more per app, day and version, with the OS and
-- device columns always '' (the same shape, so one upsert and one query serve both levels). A
-- query that neither filters nor groups by OS or device reads these: over 1 M payloads a handful
-- of rows per day and version instead of one per OS and device. The leader's fold (the only
-- writer of rollup rows) upserts both levels in its transaction.

CREATE TABLE usage_rollup_v (LIKE usage_rollup INCLUDING ALL);
CREATE TABLE exit_rollup_v (LIKE exit_rollup INCLUDING ALL);
CREATE TABLE signpost_rollup_v (LIKE signpost_rollup INCLUDING ALL);
CREATE TABLE bucket_rollup_v (LIKE bucket_rollup INCLUDING ALL);
CREATE TABLE diagnostic_rollup_v (LIKE diagnostic_rollup INCLUDING ALL);

INSERT INTO usage_rollup_v (app, day, version, os, device, payloads, foreground_ms, background_ms)
SELECT app, day, version, '', '', sum(payloads), sum(foreground_ms), sum(background_ms)
FROM usage_rollup GROUP BY app, day, version;
INSERT INTO exit_rollup_v (app, day, version, os, device, state, reason, count)
SELECT app, day, version, '', '', state, reason, sum(count)
FROM exit_rollup GROUP BY app, day, version, state, reason;
INSERT INTO signpost_rollup_v (app, day, version, os, device, category, name, count)
SELECT app, day, version, '', '', category, name, sum(count)
FROM signpost_rollup GROUP BY app, day, version, category, name;
INSERT INTO bucket_rollup_v (app, day, version, os, device, source, bucket_start, bucket_end, count)
SELECT app, day, version, '', '', source, bucket_start, bucket_end, sum(count)
FROM bucket_rollup GROUP BY app, day, version, source, bucket_start, bucket_end;
INSERT INTO diagnostic_rollup_v (app, day, version, os, device, kind, crash_group, count)
SELECT app, day, version, '', '', kind, crash_group, sum(count)
FROM diagnostic_rollup GROUP BY app, day, version, kind, crash_group;
