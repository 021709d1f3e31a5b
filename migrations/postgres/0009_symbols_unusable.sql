-- 0009_symbols_unusable, as SQLite's 0011: a symbol file that crashed llvm-symbolizer or ran past
-- the request time limit is marked once, with its reason ('crashed' or 'timed_out') and when
-- (seconds since the epoch); lookups skip it. Uploading the same UUID again clears the mark.
ALTER TABLE debug_symbols ADD COLUMN unusable_reason text CHECK (length(unusable_reason) BETWEEN 1 AND 32);
ALTER TABLE debug_symbols ADD COLUMN unusable_at bigint;
