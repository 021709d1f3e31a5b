-- 0007_reports_v2: iOS 27 `MetricReport` / `DiagnosticReport` documents (issue 14).
--
-- * payloads.format: 'legacy' (jsonRepresentation) or 'v2' ("version": "2.0.0").
-- * payloads.device_day: 0 for a 2.0.0 zero-length report (the disk-space snapshot): stored, but
--   not a day of usage, so it is not counted in the payloads (device-days) of the rollups.
-- * diagnostics: terminationCategory, the process id and the signpost data of 2.0.0 diagnostics;
--   the kind 'memory_exception' (new in iOS 27) is added to the kinds' CHECK by the binary right
--   after this migration (SQLite cannot alter a CHECK; the table definition is edited in place).
-- * App states (app-defined: a screen, an experiment arm): a state is (domain, label, metadata),
--   metadata a canonical JSON object. Per metric payload: which states it reported and for how
--   long, and the exit counts, histograms and signposts observed while each was active; per
--   diagnostic: the states active before the event.
-- * interval_slices: the ~3-hour interval entries of a 2.0.0 metric report beside its full-day
--   one: their length and resource metrics (scalars).

ALTER TABLE payloads ADD COLUMN format TEXT NOT NULL DEFAULT 'legacy' CHECK (format IN ('legacy', 'v2'));
ALTER TABLE payloads ADD COLUMN device_day INTEGER NOT NULL DEFAULT 1 CHECK (device_day IN (0, 1));

ALTER TABLE diagnostics ADD COLUMN termination_category TEXT;
ALTER TABLE diagnostics ADD COLUMN pid INTEGER;
ALTER TABLE diagnostics ADD COLUMN signpost_data TEXT;

CREATE TABLE app_state_values (
    id INTEGER PRIMARY KEY,
    domain TEXT NOT NULL CHECK (length(domain) BETWEEN 1 AND 1024),
    label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 1024),
    metadata TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    UNIQUE (domain, label, metadata)
);

CREATE TABLE payload_states (
    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
    app_state INTEGER NOT NULL REFERENCES app_state_values (id),
    active_seconds REAL,
    PRIMARY KEY (payload, app_state)
) WITHOUT ROWID;

CREATE TABLE state_exit_counts (
    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
    app_state INTEGER NOT NULL REFERENCES app_state_values (id),
    state INTEGER NOT NULL REFERENCES app_states (id),
    reason INTEGER NOT NULL REFERENCES exit_reasons (id),
    count INTEGER NOT NULL CHECK (count > 0),
    PRIMARY KEY (payload, app_state, state, reason)
) WITHOUT ROWID;

CREATE TABLE state_histograms (
    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
    app_state INTEGER NOT NULL REFERENCES app_state_values (id),
    metric INTEGER NOT NULL REFERENCES metric_names (id),
    unit INTEGER REFERENCES units (id),
    total_count INTEGER NOT NULL CHECK (total_count >= 0),
    buckets BLOB NOT NULL,
    PRIMARY KEY (payload, app_state, metric)
) WITHOUT ROWID;

CREATE TABLE state_signposts (
    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
    app_state INTEGER NOT NULL REFERENCES app_state_values (id),
    category INTEGER NOT NULL REFERENCES signpost_categories (id),
    name INTEGER NOT NULL REFERENCES signpost_names (id),
    total_count INTEGER NOT NULL CHECK (total_count >= 0),
    durations BLOB,
    PRIMARY KEY (payload, app_state, category, name)
) WITHOUT ROWID;

CREATE TABLE diagnostic_states (
    diagnostic INTEGER NOT NULL REFERENCES diagnostics (id) ON DELETE CASCADE,
    app_state INTEGER NOT NULL REFERENCES app_state_values (id),
    PRIMARY KEY (diagnostic, app_state)
) WITHOUT ROWID;

CREATE TABLE interval_slices (
    payload INTEGER NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
    metric INTEGER NOT NULL REFERENCES metric_names (id),
    duration_s REAL NOT NULL,
    value REAL,
    unit INTEGER REFERENCES units (id),
    PRIMARY KEY (payload, ordinal, metric)
) WITHOUT ROWID;
