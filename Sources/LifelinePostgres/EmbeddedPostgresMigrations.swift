// GENERATED FILE: do not edit. Made from migrations/postgres/*.sql by: bash scripts/embed-migrations.sh
// Add a new .sql file (never change a shipped one) and run it again; GeneratedFilesAreFresh fails when
// this file differs from what the script makes.

import LifelineStorage

/// The SQL migrations shipped with this binary, in version order (generated, do not edit).
package enum EmbeddedPostgresMigrations {
    /// Every migration of `migrations/postgres/`, byte for byte.
    package static let all: [Migration] = [
        Migration(
            version: 1,
            name: "initial",
            sql: #"""
                -- Lifeline on PostgreSQL: the model of the SQLite store (migrations/0001–0009), in PostgreSQL's
                -- terms. Dimension values are stored as text ('' = unknown, shown as "unknown"), rollups as
                -- plain rows that concurrent writers update with INSERT … ON CONFLICT DO UPDATE, and the raw
                -- documents in day partitions that retention drops whole.

                CREATE TABLE apps (
                    id bigserial PRIMARY KEY,
                    bundle_id text NOT NULL UNIQUE CHECK (length(bundle_id) BETWEEN 1 AND 255)
                );

                -- One row per distinct document of an app: (app, content_hash) is the idempotency of ingest,
                -- enforced by the unique constraint, so two nodes receiving the same document store it once.
                CREATE TABLE payloads (
                    id bigserial PRIMARY KEY,
                    app bigint NOT NULL REFERENCES apps (id),
                    kind text NOT NULL CHECK (kind IN ('metric', 'diagnostic')),
                    app_version text NOT NULL,
                    build text NOT NULL,
                    os_version text NOT NULL,
                    device_type text NOT NULL,
                    region text NOT NULL,
                    arch text NOT NULL,
                    day date NOT NULL,
                    begin_at bigint,
                    end_at bigint,
                    received_at_ms bigint NOT NULL,
                    content_hash bytea NOT NULL CHECK (length(content_hash) = 32),
                    format text NOT NULL,
                    device_day boolean NOT NULL,
                    unparsed_measurements integer NOT NULL DEFAULT 0,
                    dropped_values integer NOT NULL DEFAULT 0,
                    UNIQUE (app, content_hash)
                );
                CREATE INDEX payloads_app_day ON payloads (app, day);

                -- The raw documents as received (gzip or plain bytes after decompression), one partition per
                -- day (payload_raw_YYYYMMDD, created by the writer for recent days), days outside that window
                -- in the default partition.
                CREATE TABLE payload_raw (
                    day date NOT NULL,
                    payload bigint NOT NULL,
                    raw bytea NOT NULL,
                    PRIMARY KEY (day, payload)
                ) PARTITION BY RANGE (day);
                CREATE TABLE payload_raw_default PARTITION OF payload_raw DEFAULT;

                -- Replays of a request with the same Idempotency-Key answer the first outcome.
                CREATE TABLE idempotency_keys (
                    app bigint NOT NULL REFERENCES apps (id),
                    key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
                    accepted integer NOT NULL,
                    duplicates integer NOT NULL,
                    payload_ids bigint[] NOT NULL,
                    created_at bigint NOT NULL,
                    PRIMARY KEY (app, key)
                );

                CREATE TABLE crash_groups (
                    id bigserial PRIMARY KEY,
                    app bigint NOT NULL REFERENCES apps (id),
                    fingerprint text NOT NULL,
                    group_kind text NOT NULL,
                    title text NOT NULL,
                    first_seen bigint NOT NULL,
                    last_seen bigint NOT NULL,
                    count bigint NOT NULL,
                    UNIQUE (app, fingerprint)
                );

                CREATE TABLE diagnostics (
                    id bigserial PRIMARY KEY,
                    payload bigint NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    ordinal integer NOT NULL,
                    kind text NOT NULL,
                    app_version text NOT NULL,
                    os_version text NOT NULL,
                    device_type text NOT NULL,
                    occurred_at bigint NOT NULL,
                    exception_type bigint,
                    exception_code bigint,
                    signal bigint,
                    termination_reason text,
                    termination_category text,
                    pid bigint,
                    signpost_data text,
                    exception_message text,
                    crash_group bigint NOT NULL REFERENCES crash_groups (id),
                    UNIQUE (payload, ordinal)
                );
                CREATE INDEX diagnostics_group ON diagnostics (crash_group, id);

                CREATE TABLE diagnostic_frames (
                    diagnostic bigint NOT NULL REFERENCES diagnostics (id) ON DELETE CASCADE,
                    position integer NOT NULL,
                    binary_name text,
                    binary_uuid text,
                    address bigint NOT NULL,
                    "offset" bigint NOT NULL,
                    PRIMARY KEY (diagnostic, position)
                );

                -- Rollups: one row per app, day, version, OS and device (and the row's own key), summed by upserts.
                CREATE TABLE usage_rollup (
                    app bigint NOT NULL,
                    day date NOT NULL,
                    version text NOT NULL,
                    os text NOT NULL,
                    device text NOT NULL,
                    payloads bigint NOT NULL,
                    foreground_ms double precision NOT NULL,
                    background_ms double precision NOT NULL,
                    PRIMARY KEY (app, day, version, os, device)
                );

                CREATE TABLE exit_rollup (
                    app bigint NOT NULL,
                    day date NOT NULL,
                    version text NOT NULL,
                    os text NOT NULL,
                    device text NOT NULL,
                    state smallint NOT NULL,
                    reason text NOT NULL,
                    count bigint NOT NULL,
                    PRIMARY KEY (app, day, version, os, device, state, reason)
                );

                CREATE TABLE signpost_rollup (
                    app bigint NOT NULL,
                    day date NOT NULL,
                    version text NOT NULL,
                    os text NOT NULL,
                    device text NOT NULL,
                    category text NOT NULL,
                    name text NOT NULL,
                    count bigint NOT NULL,
                    PRIMARY KEY (app, day, version, os, device, category, name)
                );

                CREATE TABLE bucket_rollup (
                    app bigint NOT NULL,
                    day date NOT NULL,
                    version text NOT NULL,
                    os text NOT NULL,
                    device text NOT NULL,
                    source text NOT NULL,
                    bucket_start double precision NOT NULL,
                    bucket_end double precision NOT NULL,
                    count bigint NOT NULL,
                    PRIMARY KEY (app, day, version, os, device, source, bucket_start, bucket_end)
                );

                CREATE TABLE diagnostic_rollup (
                    app bigint NOT NULL,
                    day date NOT NULL,
                    version text NOT NULL,
                    os text NOT NULL,
                    device text NOT NULL,
                    kind text NOT NULL,
                    crash_group bigint NOT NULL,
                    count bigint NOT NULL,
                    PRIMARY KEY (app, day, version, os, device, kind, crash_group)
                );

                """#
        ),
        Migration(
            version: 2,
            name: "keys",
            sql: #"""
                -- API keys (ll_<id>_<secret>; only the secret's SHA-256 is kept), as in the SQLite store
                -- (migrations 0001, 0005, 0009). Shared by every node: a key revoked on one node stops working
                -- on all of them within the key cache time (server.key_cache_seconds).

                CREATE TABLE api_keys (
                    id text PRIMARY KEY CHECK (length(id) BETWEEN 8 AND 12),
                    role text NOT NULL CHECK (role IN ('ingest', 'read', 'admin', 'symbols')),
                    app text CHECK (app IS NULL OR length(app) BETWEEN 1 AND 255),
                    secret_hash bytea NOT NULL CHECK (length(secret_hash) = 32),
                    created_at bigint NOT NULL,
                    revoked_at bigint,
                    last_used_at bigint,
                    expires_at bigint,
                    previous_secret_hash bytea CHECK (previous_secret_hash IS NULL OR length(previous_secret_hash) = 32),
                    previous_valid_until bigint,
                    CHECK (role NOT IN ('ingest', 'symbols') OR app IS NOT NULL),
                    CHECK (role <> 'admin' OR app IS NULL)
                );

                """#
        ),
        Migration(
            version: 3,
            name: "alerts",
            sql: #"""
                -- State and history of the alert rule evaluator, as in the SQLite store (migration 0003), so a
                -- restart or a change of leader neither re-fires nor forgets an alert. Only the leader writes
                -- here; every node reads (GET /v1/alerts, reports).
                --
                -- An alert is one (rule name, label set) pair; `fingerprint` is a stable hash of the sorted
                -- labels, `labels` their JSON object (text: the same bytes as on SQLite). Times are epoch seconds.

                CREATE TABLE alert_state (
                    rule text NOT NULL CHECK (length(rule) BETWEEN 1 AND 255),
                    fingerprint text NOT NULL CHECK (length(fingerprint) BETWEEN 1 AND 64),
                    labels text NOT NULL,
                    annotations text NOT NULL DEFAULT '{}',
                    state text NOT NULL CHECK (state IN ('pending', 'firing', 'resolved')),
                    active_since bigint NOT NULL,
                    fired_at bigint,
                    resolved_at bigint,
                    last_active bigint NOT NULL,
                    last_value double precision,
                    last_samples bigint NOT NULL DEFAULT 0,
                    last_eval bigint NOT NULL,
                    PRIMARY KEY (rule, fingerprint),
                    CHECK (state = 'pending' OR fired_at IS NOT NULL),
                    CHECK ((state = 'resolved') = (resolved_at IS NOT NULL))
                );

                CREATE TABLE alert_history (
                    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    rule text NOT NULL,
                    fingerprint text NOT NULL,
                    labels text NOT NULL,
                    from_state text NOT NULL CHECK (from_state IN ('inactive', 'pending', 'firing', 'resolved')),
                    to_state text NOT NULL CHECK (to_state IN ('inactive', 'pending', 'firing', 'resolved')),
                    at bigint NOT NULL,
                    value double precision
                );

                CREATE INDEX alert_history_at ON alert_history (at);
                CREATE INDEX alert_history_alert ON alert_history (rule, fingerprint, at);

                CREATE TABLE rule_evaluations (
                    rule text PRIMARY KEY CHECK (length(rule) BETWEEN 1 AND 255),
                    last_eval bigint NOT NULL,
                    duration_ms double precision NOT NULL DEFAULT 0,
                    value_summary text,
                    error text
                );

                """#
        ),
        Migration(
            version: 4,
            name: "sessions",
            sql: #"""
                -- Dashboard sessions, as in the SQLite store (migration 0005): the cookie carries an opaque random
                -- id; only its SHA-256 is stored, with the key it signs in as and when it expires. Shared by every
                -- node, so a browser signed in through one node is signed in on all of them; revoking the key
                -- ends its sessions.

                CREATE TABLE dashboard_sessions (
                    id_hash bytea PRIMARY KEY CHECK (length(id_hash) = 32),
                    key_id text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
                    created_at bigint NOT NULL,
                    expires_at bigint NOT NULL
                );

                CREATE INDEX dashboard_sessions_by_key ON dashboard_sessions (key_id);
                CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);

                """#
        ),
        Migration(
            version: 5,
            name: "app_states",
            sql: #"""
                -- What only iOS 27 reports carry, as in the SQLite store (migration 0007): the app states of a
                -- metric payload (which ones, for how long, and the exit counts, histogram buckets and signposts
                -- observed while each was active) and the states active before a diagnostic. Rows are per
                -- payload (no per-state rollups), removed with their payload; dimension values as in the
                -- rollups ('' = unknown). Histogram buckets of a metric (`source` = its name) and signpost
                -- durations (`source` = 'signpost:<category>/<name>') share one table, as in bucket_rollup.

                CREATE TABLE app_state_values (
                    id bigserial PRIMARY KEY,
                    domain text NOT NULL CHECK (length(domain) BETWEEN 1 AND 1024),
                    label text NOT NULL CHECK (length(label) BETWEEN 1 AND 1024),
                    metadata text NOT NULL DEFAULT '{}',
                    UNIQUE (domain, label, metadata)
                );

                CREATE TABLE payload_states (
                    payload bigint NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    app_state bigint NOT NULL REFERENCES app_state_values (id),
                    active_seconds double precision,
                    PRIMARY KEY (payload, app_state)
                );

                CREATE TABLE state_exit_counts (
                    payload bigint NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    app_state bigint NOT NULL REFERENCES app_state_values (id),
                    state smallint NOT NULL,
                    reason text NOT NULL,
                    count bigint NOT NULL CHECK (count > 0),
                    PRIMARY KEY (payload, app_state, state, reason)
                );

                CREATE TABLE state_signposts (
                    payload bigint NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    app_state bigint NOT NULL REFERENCES app_state_values (id),
                    category text NOT NULL,
                    name text NOT NULL,
                    total_count bigint NOT NULL CHECK (total_count >= 0),
                    PRIMARY KEY (payload, app_state, category, name)
                );

                CREATE TABLE state_buckets (
                    payload bigint NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    app_state bigint NOT NULL REFERENCES app_state_values (id),
                    source text NOT NULL,
                    bucket_start double precision NOT NULL,
                    bucket_end double precision NOT NULL,
                    count bigint NOT NULL CHECK (count > 0),
                    PRIMARY KEY (payload, app_state, source, bucket_start, bucket_end)
                );

                CREATE TABLE diagnostic_states (
                    diagnostic bigint NOT NULL REFERENCES diagnostics (id) ON DELETE CASCADE,
                    app_state bigint NOT NULL REFERENCES app_state_values (id),
                    PRIMARY KEY (diagnostic, app_state)
                );

                """#
        ),
        Migration(
            version: 6,
            name: "symbols",
            sql: #"""
                -- Debug symbols, as in the SQLite store (migrations 0008, 0009): one row per Mach-O slice of an
                -- imported dSYM, keyed by its LC_UUID. The slice's bytes live here too, in chunks of at most
                -- 8 MiB (written and read one chunk at a time: memory stays bounded whatever the dSYM's size),
                -- so every node can symbolicate without a shared file system: each copies a slice to its local
                -- cache directory on first use (llvm-symbolizer reads files).

                CREATE TABLE debug_symbols (
                    uuid text PRIMARY KEY CHECK (length(uuid) = 36),
                    app text NOT NULL CHECK (length(app) BETWEEN 1 AND 255),
                    arch text NOT NULL CHECK (length(arch) BETWEEN 1 AND 32),
                    binary_name text NOT NULL CHECK (length(binary_name) BETWEEN 1 AND 255),
                    text_vmaddr bigint NOT NULL,
                    size bigint NOT NULL CHECK (size >= 0),
                    uploaded_at bigint NOT NULL
                );
                CREATE INDEX debug_symbols_app ON debug_symbols (app, uploaded_at);

                CREATE TABLE debug_symbol_chunks (
                    uuid text NOT NULL REFERENCES debug_symbols (uuid) ON DELETE CASCADE,
                    n integer NOT NULL CHECK (n >= 0),
                    bytes bytea NOT NULL,
                    PRIMARY KEY (uuid, n)
                );

                """#
        ),
        Migration(
            version: 7,
            name: "diagnostic_partitions",
            sql: #"""
                -- Diagnostics and their frames partitioned by day, as the raw documents are (0001), so retention
                -- drops a day's diagnostics whole instead of deleting them row by row: `day` is the day of the
                -- diagnostic's payload (payloads.day); a node creates diagnostics_YYYYMMDD and
                -- diagnostic_frames_YYYYMMDD with payload_raw_YYYYMMDD for days from 8 days ago to tomorrow, and
                -- other days go to the default partitions. Frames and the app states of a diagnostic carry its
                -- day, so a sample's frames are read from one partition. No foreign key points at the
                -- partitioned diagnostics (a partition could not be dropped while one did): the writer keeps
                -- frames and states with their diagnostic, and retention removes a day from all three.
                -- The rows already stored move over in this migration's transaction.

                CREATE TABLE diagnostics_by_day (
                    day date NOT NULL,
                    id bigint NOT NULL,
                    payload bigint NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
                    ordinal integer NOT NULL,
                    kind text NOT NULL,
                    app_version text NOT NULL,
                    os_version text NOT NULL,
                    device_type text NOT NULL,
                    occurred_at bigint NOT NULL,
                    exception_type bigint,
                    exception_code bigint,
                    signal bigint,
                    termination_reason text,
                    termination_category text,
                    pid bigint,
                    signpost_data text,
                    exception_message text,
                    crash_group bigint NOT NULL REFERENCES crash_groups (id),
                    PRIMARY KEY (day, id),
                    UNIQUE (day, payload, ordinal)
                ) PARTITION BY RANGE (day);
                CREATE TABLE diagnostics_default PARTITION OF diagnostics_by_day DEFAULT;

                CREATE TABLE diagnostic_frames_by_day (
                    day date NOT NULL,
                    diagnostic bigint NOT NULL,
                    position integer NOT NULL,
                    binary_name text,
                    binary_uuid text,
                    address bigint NOT NULL,
                    "offset" bigint NOT NULL,
                    PRIMARY KEY (day, diagnostic, position)
                ) PARTITION BY RANGE (day);
                CREATE TABLE diagnostic_frames_default PARTITION OF diagnostic_frames_by_day DEFAULT;

                INSERT INTO diagnostics_by_day
                SELECT p.day, d.id, d.payload, d.ordinal, d.kind, d.app_version, d.os_version, d.device_type, d.occurred_at,
                    d.exception_type, d.exception_code, d.signal, d.termination_reason, d.termination_category, d.pid,
                    d.signpost_data, d.exception_message, d.crash_group
                FROM diagnostics d JOIN payloads p ON p.id = d.payload;

                INSERT INTO diagnostic_frames_by_day
                SELECT d.day, f.diagnostic, f.position, f.binary_name, f.binary_uuid, f.address, f."offset"
                FROM diagnostic_frames f JOIN diagnostics_by_day d ON d.id = f.diagnostic;

                CREATE TABLE diagnostic_states_by_day (
                    day date NOT NULL,
                    diagnostic bigint NOT NULL,
                    app_state bigint NOT NULL REFERENCES app_state_values (id),
                    PRIMARY KEY (day, diagnostic, app_state)
                );

                INSERT INTO diagnostic_states_by_day
                SELECT d.day, s.diagnostic, s.app_state FROM diagnostic_states s JOIN diagnostics_by_day d ON d.id = s.diagnostic;

                -- The id sequence outlives the old table.
                ALTER SEQUENCE diagnostics_id_seq OWNED BY NONE;
                DROP TABLE diagnostic_states;
                DROP TABLE diagnostic_frames;
                DROP TABLE diagnostics;
                ALTER TABLE diagnostics_by_day RENAME TO diagnostics;
                ALTER TABLE diagnostic_frames_by_day RENAME TO diagnostic_frames;
                ALTER TABLE diagnostic_states_by_day RENAME TO diagnostic_states;
                ALTER TABLE diagnostics ALTER COLUMN id SET DEFAULT nextval('diagnostics_id_seq');
                ALTER SEQUENCE diagnostics_id_seq OWNED BY diagnostics.id;

                -- The sample of a crash group: its most recent diagnostic.
                CREATE INDEX diagnostics_group ON diagnostics (crash_group, occurred_at);

                """#
        ),
        Migration(
            version: 8,
            name: "alert_outbox",
            sql: #"""
                -- A durable outbox for alert notifications, as in the SQLite store (migration 0010): written in
                -- the same transaction as the alert's state change, delivered by the leader in id order, marked
                -- finished when the receiver answered (or the last attempt failed). A leader killed in between
                -- leaves the row pending and the next leader delivers it with the same dedup_key.
                CREATE TABLE alert_outbox (
                    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    receiver text NOT NULL CHECK (length(receiver) BETWEEN 1 AND 255),
                    dedup_key text NOT NULL CHECK (length(dedup_key) BETWEEN 1 AND 1024),
                    body text NOT NULL,
                    created_at bigint NOT NULL,
                    finished_at bigint,
                    failed boolean NOT NULL DEFAULT false,
                    UNIQUE (receiver, dedup_key)
                );
                CREATE INDEX alert_outbox_pending ON alert_outbox (id) WHERE finished_at IS NULL;

                """#
        ),
        Migration(
            version: 9,
            name: "symbols_unusable",
            sql: #"""
                -- 0009_symbols_unusable, as SQLite's 0011: a symbol file that crashed llvm-symbolizer or ran past
                -- the request time limit is marked once, with its reason ('crashed' or 'timed_out') and when
                -- (seconds since the epoch); lookups skip it. Uploading the same UUID again clears the mark.
                ALTER TABLE debug_symbols ADD COLUMN unusable_reason text CHECK (length(unusable_reason) BETWEEN 1 AND 32);
                ALTER TABLE debug_symbols ADD COLUMN unusable_at bigint;

                """#
        ),
        Migration(
            version: 10,
            name: "unread_documents",
            sql: #"""
                -- 0010_unread_documents: bodies Lifeline cannot read yet (a report of a major version it does
                -- not know, issue 24) are kept as received instead of refused: stored raw, deduplicated per app
                -- and content, counted nowhere. A release that reads them folds them.
                CREATE TABLE unread_documents (
                    id BIGSERIAL PRIMARY KEY,
                    app TEXT NOT NULL CHECK (length(app) BETWEEN 1 AND 255),
                    content_hash BYTEA NOT NULL CHECK (length(content_hash) = 32),
                    received_at_ms BIGINT NOT NULL,
                    reason TEXT NOT NULL,
                    detail TEXT NOT NULL,
                    raw BYTEA NOT NULL,
                    UNIQUE (app, content_hash)
                );

                """#
        ),
        Migration(
            version: 11,
            name: "aggregator",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 12,
            name: "version_rollups",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 13,
            name: "bucket_cells",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 14,
            name: "explorer_cells",
            sql: #"""
                -- The metrics explorer's folded state (issue 26): one row per app, day, version, OS, device and
                -- app state ('all' or an iOS 27 state's key), holding every metric's ExplorerCell of that cell
                -- packed in one value (ExplorerCellMap: per metric and series — a signpost — the sketch over
                -- device-days, ratio moments and histogram buckets; Sources/LifelineAnalysis/Explorer/), at both
                -- levels (`_v`: OS and device ''). One row per metric made a fold batch upsert ~45 rows per cell,
                -- and the leader folded ~470 documents/s. Only the leader's fold writes them (it reads the stored
                -- maps of a batch, merges them in Swift and writes them back, under the fold's lock);
                -- `lifeline refold` rebuilds them from the raw documents, which back-fills a database older than
                -- this migration.
                CREATE TABLE explorer_cells (
                    app bigint NOT NULL,
                    day date NOT NULL,
                    version text NOT NULL,
                    os text NOT NULL,
                    device text NOT NULL,
                    app_state text NOT NULL,
                    cells bytea NOT NULL,
                    PRIMARY KEY (app, day, version, os, device, app_state)
                );

                CREATE TABLE explorer_cells_v (LIKE explorer_cells INCLUDING ALL);

                """#
        ),
        Migration(
            version: 15,
            name: "explorer_by_category",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 16,
            name: "explorer_partitions",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 17,
            name: "exit_cells",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 18,
            name: "signpost_cells",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 19,
            name: "bucket_cells_per_cell",
            sql: #"""
                -- Histogram buckets packed one row per cell (issue 25): every histogram source of an app, day,
                -- version, OS and device in one row, at both levels: the cell's sources (sorted), the number of
                -- buckets of each (lengths), and the buckets of all its sources end to end, in the same order,
                -- each source's sorted by bounds (starts, ends, counts). One row per cell and source made the
                -- leader's fold write ~11 rows and their keys per document on the reference load (every document
                -- its own fine cell): half of the fold's statement time (BENCHMARKS.md, "Histogram buckets packed
                -- per cell"). Counts and bounds stay exact. ll_merge_buckets, unused since the leader merges
                -- buckets in Swift, goes.

                CREATE TABLE bucket_cells_packed (
                    app bigint NOT NULL,
                    day date NOT NULL,
                    version text NOT NULL,
                    os text NOT NULL,
                    device text NOT NULL,
                    sources text[] NOT NULL,
                    lengths integer[] NOT NULL,
                    starts double precision[] NOT NULL,
                    ends double precision[] NOT NULL,
                    counts bigint[] NOT NULL,
                    PRIMARY KEY (app, day, version, os, device)
                );
                CREATE TABLE bucket_cells_packed_v (LIKE bucket_cells_packed INCLUDING ALL);

                INSERT INTO bucket_cells_packed (app, day, version, os, device, sources, lengths, starts, ends, counts)
                SELECT app, day, version, os, device, array_agg(source ORDER BY source, n) FILTER (WHERE n = 1),
                    array_agg(cardinality(counts) ORDER BY source, n) FILTER (WHERE n = 1), array_agg(s ORDER BY source, n),
                    array_agg(e ORDER BY source, n), array_agg(c ORDER BY source, n)
                FROM bucket_cells CROSS JOIN LATERAL unnest(starts, ends, counts) WITH ORDINALITY AS x (s, e, c, n)
                GROUP BY app, day, version, os, device;
                INSERT INTO bucket_cells_packed_v (app, day, version, os, device, sources, lengths, starts, ends, counts)
                SELECT app, day, version, os, device, array_agg(source ORDER BY source, n) FILTER (WHERE n = 1),
                    array_agg(cardinality(counts) ORDER BY source, n) FILTER (WHERE n = 1), array_agg(s ORDER BY source, n),
                    array_agg(e ORDER BY source, n), array_agg(c ORDER BY source, n)
                FROM bucket_cells_v CROSS JOIN LATERAL unnest(starts, ends, counts) WITH ORDINALITY AS x (s, e, c, n)
                GROUP BY app, day, version, os, device;

                DROP TABLE bucket_cells;
                DROP TABLE bucket_cells_v;
                ALTER TABLE bucket_cells_packed RENAME TO bucket_cells;
                ALTER TABLE bucket_cells_packed_v RENAME TO bucket_cells_v;
                DROP FUNCTION ll_merge_buckets;

                -- A version-level row holds every bucket of its version-day (~8 KB on the reference load): kept
                -- inline up to a page, not compressed and moved to the TOAST table at the default ~2 KB, which
                -- made every fold's rewrite of those rows cost several times the fine rows' (BENCHMARKS.md).
                ALTER TABLE bucket_cells SET (toast_tuple_target = 8160);
                ALTER TABLE bucket_cells_v SET (toast_tuple_target = 8160);

                """#
        ),
        Migration(
            version: 20,
            name: "exit_cells_by_os_device",
            sql: #"""
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

                """#
        ),
        Migration(
            version: 21,
            name: "payloads_without_app_key_check",
            sql: #"""
                -- payloads.app without its foreign key to apps (issue 25: the door's cost on PostgreSQL).
                --
                -- Every payload row the door inserted ran the key check `SELECT 1 FROM ONLY apps WHERE id = $1
                -- FOR KEY SHARE`: a lock on the app's one row taken by every door transaction at once (a MultiXact
                -- when they overlap, the row's heap page written again for each). An app row is never deleted nor
                -- its id changed (a node adds an app with `INSERT … ON CONFLICT DO NOTHING` and reads its id back
                -- before any payload uses it; no command removes one), so the check guarded nothing the writer
                -- does not ensure already. Measured, one node under the reference load, six rounds alternated:
                -- 1,876 against 1,803 payloads/s (means), p99 43.6–52.5 against 47.5–56.9 ms (BENCHMARKS.md,
                -- "The door without the app key check").
                ALTER TABLE payloads DROP CONSTRAINT IF EXISTS payloads_app_fkey;

                """#
        ),
    ]
}
