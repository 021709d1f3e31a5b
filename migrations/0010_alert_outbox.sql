-- 0010_alert_outbox: a durable outbox for alert notifications (issue 23). A change of an alert
-- (firing, resolved) writes one row per receiver in the same transaction as the state change; the
-- leader delivers pending rows in id order and marks them finished. A process killed between the
-- commit and the receiver's answer leaves the row pending: the next start (or leader) delivers it,
-- with the same dedup_key, which the webhook body carries so a receiver can drop a repeat.
CREATE TABLE alert_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    receiver TEXT NOT NULL CHECK (length(receiver) BETWEEN 1 AND 255),
    dedup_key TEXT NOT NULL CHECK (length(dedup_key) BETWEEN 1 AND 1024),
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    finished_at INTEGER,
    failed INTEGER NOT NULL DEFAULT 0 CHECK (failed IN (0, 1)),
    UNIQUE (receiver, dedup_key)
);
-- Pending rows are few and read in id order.
CREATE INDEX alert_outbox_pending ON alert_outbox (id) WHERE finished_at IS NULL;
