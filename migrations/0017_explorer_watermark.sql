-- 0017_explorer_watermark: the explorer's rows get a watermark of their own.
--
-- The aggregator folds every committed document into the rollups at once, but the explorer's
-- cells (rollup_explorer, rollup_explorer_by_version) are written less often: the writer holds
-- their deltas in memory across folds and writes them (merged into the stored rows) at most
-- every second, when a reader waits, or when too many are held. A packed row rewritten at every
-- fold batch cost 0.3-0.45x of the door's rate on a fleet-like load (BENCHMARKS.md, "The
-- explorer's rows written behind the fold").
--
-- Every metric document with an id at or below explorer_through is in the explorer's rows, none
-- above; explorer_through <= folded_through. After a crash, the documents between the two are
-- read again from their raw copies (they are in the rollups already, not yet in the explorer's
-- rows). Everything folded before this migration is in the explorer's rows.
ALTER TABLE aggregation_state ADD COLUMN explorer_through INTEGER NOT NULL DEFAULT 0;
UPDATE aggregation_state SET explorer_through = folded_through;
