-- 0011_symbols_unusable: a symbol file that crashed llvm-symbolizer or ran past the request time
-- limit is marked once (issue 24): its reason ('crashed' or 'timed_out') and when (seconds since
-- the epoch). Lookups skip a marked slice, so every later query goes on unsymbolicated at normal
-- speed; `dsym list` and the missing-symbols list show it. Uploading the same UUID again replaces
-- the file and clears the mark.
ALTER TABLE debug_symbols ADD COLUMN unusable_reason TEXT;
ALTER TABLE debug_symbols ADD COLUMN unusable_at INTEGER;
