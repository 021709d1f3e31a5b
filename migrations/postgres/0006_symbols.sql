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
