-- 0031_payload_keys: the door writes no random index entry; the two lookups of payloads by
-- content and by day are tables the writer fills in sorted bulk behind a watermark.
-- lifeline: foreign keys off
--
-- Every new payload put an entry at a random place of two indexes of `payloads`: the UNIQUE
-- (app, content_hash) one (a SHA-256: random by nature) and payloads_by_app_kind_day (random on a
-- fleet reporting many days at once). Once an index has more pages than a commit has documents,
-- each document dirtied a page of each, written whole to the WAL and again by the checkpoint:
-- ~16 KB of the ~60 KB written per reference payload (BENCHMARKS.md, "The door's lookups filled
-- in bulk").
--
-- Now `payloads` has no secondary index. payload_keys (dedup) and payload_days (the pruner's,
-- the refold's and /v1/apps' walk by day) hold the payloads with an id up to
-- aggregation_state.indexed_through; the writer appends the ones above it (its in-memory tail of
-- keys answers the door meanwhile) in one sorted INSERT per several thousand documents, where a
-- page takes many entries. payloads_by_day reads both: the table up to the watermark and the
-- unindexed tail above it (a few thousand rows, by id), so nothing is missed at any moment.
--
-- SQLite cannot drop a UNIQUE constraint: the table is rebuilt (sqlite.org/lang_altertable.html,
-- "making other kinds of table schema changes"), which needs foreign keys off: the binary turns
-- them off around this migration's transaction (the line above) and runs foreign_key_check before
-- its commit. Ids become AUTOINCREMENT: the newest payload, once pruned, no longer hands its id to
-- the next one (an id at or below a watermark is never folded or indexed again).

CREATE TABLE payloads_rebuilt (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    app INTEGER NOT NULL REFERENCES apps (id),
    kind TEXT NOT NULL CHECK (kind IN ('metric', 'diagnostic')),
    app_version INTEGER REFERENCES app_versions (id),
    build INTEGER REFERENCES builds (id),
    os_version INTEGER REFERENCES os_versions (id),
    device_type INTEGER REFERENCES device_types (id),
    region INTEGER REFERENCES regions (id),
    arch INTEGER REFERENCES architectures (id),
    day TEXT NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    begin_at INTEGER,
    end_at INTEGER,
    begin_raw TEXT CHECK (begin_raw IS NULL OR begin_at IS NULL),
    end_raw TEXT CHECK (end_raw IS NULL OR end_at IS NULL),
    received_at_ms INTEGER NOT NULL,
    content_hash BLOB NOT NULL CHECK (length(content_hash) = 32),
    unparsed_measurements INTEGER NOT NULL DEFAULT 0 CHECK (unparsed_measurements >= 0),
    dropped_values INTEGER NOT NULL DEFAULT 0 CHECK (dropped_values >= 0),
    format TEXT NOT NULL DEFAULT 'legacy' CHECK (format IN ('legacy', 'v2')),
    device_day INTEGER NOT NULL DEFAULT 1 CHECK (device_day IN (0, 1))
);

INSERT INTO payloads_rebuilt (id, app, kind, app_version, build, os_version, device_type, region, arch, day,
    begin_at, end_at, begin_raw, end_raw, received_at_ms, content_hash, unparsed_measurements, dropped_values,
    format, device_day)
SELECT id, app, kind, app_version, build, os_version, device_type, region, arch, day,
    begin_at, end_at, begin_raw, end_raw, received_at_ms, content_hash, unparsed_measurements, dropped_values,
    format, device_day
FROM payloads ORDER BY id;

DROP TABLE payloads;
ALTER TABLE payloads_rebuilt RENAME TO payloads;

-- One entry per stored content of an app: the payload holding it.
CREATE TABLE payload_keys (
    app INTEGER NOT NULL,
    content_hash BLOB NOT NULL,
    payload INTEGER NOT NULL,
    PRIMARY KEY (app, content_hash)
) WITHOUT ROWID;

-- The payloads of an app and kind by day.
CREATE TABLE payload_days (
    app INTEGER NOT NULL,
    kind TEXT NOT NULL,
    day TEXT NOT NULL,
    payload INTEGER NOT NULL,
    PRIMARY KEY (app, kind, day, payload)
) WITHOUT ROWID;

ALTER TABLE aggregation_state ADD COLUMN indexed_through INTEGER NOT NULL DEFAULT 0;

INSERT INTO payload_keys (app, content_hash, payload)
SELECT app, content_hash, id FROM payloads ORDER BY app, content_hash;
INSERT INTO payload_days (app, kind, day, payload)
SELECT app, kind, day, id FROM payloads ORDER BY app, kind, day, id;
UPDATE aggregation_state SET indexed_through = (SELECT coalesce(max(id), 0) FROM payloads) WHERE id = 1;

-- The payloads of an app and kind by day, indexed or not yet: the two parts never overlap (the
-- writer moves the tail and the watermark in one transaction).
CREATE VIEW payloads_by_day (app, kind, day, id) AS
SELECT app, kind, day, payload FROM payload_days
UNION ALL
SELECT app, kind, day, id FROM payloads
WHERE id > (SELECT indexed_through FROM aggregation_state WHERE id = 1);
