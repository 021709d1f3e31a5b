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
