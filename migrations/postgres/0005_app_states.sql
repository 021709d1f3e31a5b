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
