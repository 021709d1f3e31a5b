-- 0008_symbols: debug symbols (issue 15). One row per Mach-O slice of an imported dSYM (or
-- binary with DWARF), keyed by its LC_UUID. The DWARF itself is a file in the symbol directory
-- beside the database (`<database>.symbols/<UUID>`, one thin Mach-O per slice), not a row.
-- text_vmaddr is the __TEXT segment's vmaddr: a frame's address in the file is
-- text_vmaddr + offsetIntoBinaryTextSegment.

CREATE TABLE debug_symbols (
    uuid TEXT PRIMARY KEY CHECK (length(uuid) = 36),
    app TEXT NOT NULL CHECK (length(app) BETWEEN 1 AND 255),
    arch TEXT NOT NULL CHECK (length(arch) BETWEEN 1 AND 32),
    binary_name TEXT NOT NULL CHECK (length(binary_name) BETWEEN 1 AND 255),
    text_vmaddr INTEGER NOT NULL,
    size INTEGER NOT NULL CHECK (size >= 0),
    uploaded_at INTEGER NOT NULL
) WITHOUT ROWID;
