-- The aggregator stage (issue 25): ingest appends (payloads + payload_raw, nothing else) and the
-- leader folds committed documents into the rollups, crash groups, diagnostics and per-state rows
-- behind it.
--
-- Sequence ids commit out of order across nodes and transactions, so the fold's progress is not
-- an id but the id of the inserting transaction (`xact`, a 64-bit xid8 as bigint): every
-- transaction below the fold's snapshot xmin has finished, so a watermark at or below that xmin
-- never passes a document still in flight. Documents committed above the watermark (a newer
-- transaction finished before an older one) may be folded early: they are listed in
-- folded_ahead until the watermark passes them, so each is folded exactly once.
--
-- Rows stored before this migration were summed at ingest: they have no xact and are never
-- folded again; the watermark starts above this migration's own transaction.
--
-- Upgrade every node together: a node still running the previous release sums at ingest, and
-- the fold would count its documents again.

ALTER TABLE payloads ADD COLUMN xact bigint;
ALTER TABLE payloads ALTER COLUMN xact SET DEFAULT (pg_current_xact_id()::text::bigint);
CREATE INDEX payloads_xact ON payloads (xact);

CREATE TABLE aggregation_state (
    id integer PRIMARY KEY CHECK (id = 1),
    -- Every document of a transaction below this is folded.
    folded_xact bigint NOT NULL,
    folded_at_ms bigint NOT NULL,
    folded_documents bigint NOT NULL DEFAULT 0
);
INSERT INTO aggregation_state (id, folded_xact, folded_at_ms)
VALUES (1, pg_current_xact_id()::text::bigint + 1, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);

-- Documents folded while their transaction was at or above the watermark; deleted once it
-- passes them.
CREATE TABLE folded_ahead (
    payload bigint PRIMARY KEY,
    xact bigint NOT NULL
);
CREATE INDEX folded_ahead_xact ON folded_ahead (xact);
