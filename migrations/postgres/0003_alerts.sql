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
