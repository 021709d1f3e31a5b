-- 0003_alerts: state and history of the alert rule evaluator, so a restart neither re-fires
-- nor forgets an alert.
--
-- An alert is one (rule name, label set) pair; `fingerprint` is a stable hash of the sorted
-- labels, `labels` their JSON object. Times are epoch seconds.

-- The current state of every alert that is pending, firing or recently resolved.
CREATE TABLE alert_state (
    rule TEXT NOT NULL CHECK (length(rule) BETWEEN 1 AND 255),
    fingerprint TEXT NOT NULL CHECK (length(fingerprint) BETWEEN 1 AND 64),
    labels TEXT NOT NULL CHECK (json_valid(labels)),
    annotations TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(annotations)),
    state TEXT NOT NULL CHECK (state IN ('pending', 'firing', 'resolved')),
    -- When the condition started to hold (start of the pending period).
    active_since INTEGER NOT NULL,
    -- When the alert went firing; NULL while pending.
    fired_at INTEGER,
    -- When the alert resolved; NULL unless resolved.
    resolved_at INTEGER,
    -- The last evaluation at which the condition held (keep_firing_for counts from here).
    last_active INTEGER NOT NULL,
    last_value REAL,
    last_samples INTEGER NOT NULL DEFAULT 0,
    last_eval INTEGER NOT NULL,
    PRIMARY KEY (rule, fingerprint),
    CHECK (state = 'pending' OR fired_at IS NOT NULL),
    CHECK ((state = 'resolved') = (resolved_at IS NOT NULL))
) WITHOUT ROWID;

-- Every state change, oldest first.
CREATE TABLE alert_history (
    id INTEGER PRIMARY KEY,
    rule TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    labels TEXT NOT NULL CHECK (json_valid(labels)),
    from_state TEXT NOT NULL CHECK (from_state IN ('inactive', 'pending', 'firing', 'resolved')),
    to_state TEXT NOT NULL CHECK (to_state IN ('inactive', 'pending', 'firing', 'resolved')),
    at INTEGER NOT NULL,
    value REAL
);

CREATE INDEX alert_history_at ON alert_history (at);
CREATE INDEX alert_history_alert ON alert_history (rule, fingerprint, at);

-- The last evaluation of every rule: when, a short summary of the values, the error if it failed.
CREATE TABLE rule_evaluations (
    rule TEXT PRIMARY KEY CHECK (length(rule) BETWEEN 1 AND 255),
    last_eval INTEGER NOT NULL,
    duration_ms REAL NOT NULL DEFAULT 0,
    value_summary TEXT,
    error TEXT
) WITHOUT ROWID;
