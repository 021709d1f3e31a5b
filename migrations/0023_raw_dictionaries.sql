-- 0023_raw_dictionaries: raw copies deflated at rest against a preset dictionary (issue 25).
--
-- The raw copy was the largest part of what a payload stores: the gzip body as the client sent it
-- (2.7 of 5.7 KB a payload on the reference load; BENCHMARKS.md). MetricKit's JSON repeats the
-- same keys in every document, which a 32 KB preset dictionary made from an app's own documents
-- lets deflate refer to: ~1 KB less per copy. The server re-deflates copies behind the fold, off
-- the request path (the raw compactor), and `lifeline compact` does it offline. A compacted copy
-- is a zlib stream naming its dictionary by Adler-32 (RFC 1950's DICTID), which is this table's
-- id; a dictionary is never changed or removed once a copy may refer to it.
CREATE TABLE raw_dictionaries (
    id INTEGER PRIMARY KEY,
    app INTEGER NOT NULL REFERENCES apps (id),
    kind TEXT NOT NULL CHECK (kind IN ('metric', 'diagnostic')),
    dictionary BLOB NOT NULL CHECK (length(dictionary) BETWEEN 1 AND 32768),
    -- The newest document it was made from: the compactor deflates each app and kind's copies
    -- against its newest dictionary.
    trained_through INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX raw_dictionaries_by_app_kind ON raw_dictionaries (app, kind, trained_through);

-- Compacted copies move here from payload_raw (a payload's copy is in one of the two). Shrunk
-- in place, a copy would leave its page half empty: rows are found by payload id, so no later
-- row takes that room (measured: the same pages, ~1.5 KB unused per payload). Moved, the copies
-- leave payload_raw's pages empty, free for any later insert, and this table fills its pages
-- end to end in id order.
CREATE TABLE payload_raw_packed (
    payload INTEGER PRIMARY KEY REFERENCES payloads (id) ON DELETE CASCADE,
    raw BLOB NOT NULL
);

-- The compactor's progress: every raw copy of a payload up to `through` was considered (deflated
-- against a dictionary when that saved bytes, otherwise left as it was), and what it saved.
CREATE TABLE raw_compaction (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    through INTEGER NOT NULL DEFAULT 0,
    compacted INTEGER NOT NULL DEFAULT 0,
    bytes_before INTEGER NOT NULL DEFAULT 0,
    bytes_after INTEGER NOT NULL DEFAULT 0
);
INSERT INTO raw_compaction (id) VALUES (1);
