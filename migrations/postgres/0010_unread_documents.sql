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
