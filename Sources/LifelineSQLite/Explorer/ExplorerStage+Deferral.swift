import LifelineStorage

extension ExplorerStage {
    /// When held rows are written.
    struct Deferral {
        /// Held documents at most.
        var maxDocuments = 8_192
        /// Held rows (both levels) at most before they are sealed: what bounds the memory (up to
        /// 1.5 times this many are held while sealed ones are prepared, five times while held
        /// version rows are: ``crowdLimit(preparingHeldVersions:)``) and the length of the writer's
        /// replace. A row held longer gathers more documents before it is merged into its stored
        /// bytes: with the extractor made cheaper, 4,096 ingested 1.01–1.14× more than 2,048 on
        /// the fleet-like load, for a peak RSS of 124–128 MB (against 112–116) and a p99 of
        /// 52–59 ms (against 41–44); nothing more on the reference load. 8,192 gained no more on
        /// the fleet-like load and 1.14–1.27× on the reference one, but for a peak RSS of up to
        /// 146 MB (the target is 150) and a p99 of 156–244 ms there (BENCHMARKS.md, "The
        /// explorer's fold per document").
        var maxRows = 4_096
        /// Age of the oldest held document at most.
        var maxAge: Duration = .seconds(1)
        /// Version rows held on the worker (``holdsVersions``) are sealed one part (``RollupParts``)
        /// at a time, the parts in turn, one every this long divided by the parts' count: each
        /// version row is merged into its bytes and written about once per this long, and what a
        /// crash replays into them is bounded by it. Sealed all at once every 2 s, ~16,000 rows
        /// of the iOS 27 load made one prepare of up to 0.6 s, behind which the writer waited.
        /// `database.explorer_version_seconds` (``StorageOptions/explorerVersionSeconds``) unless set.
        var versionMaxAge: Duration = .seconds(StorageOptions().explorerVersionSeconds)
        /// Version rows held unsealed at most (`database.explorer_version_rows`, 12,288 unless set:
        /// ``StorageOptions/explorerVersionRows``). 0: every seal takes the version rows too, and
        /// ``maxRows`` counts both levels. Above 0, the version rows stay in the worker
        /// (``ExplorerWorker/byVersion``) gathering documents while the fine rows are sealed on
        /// their own (``maxRows`` then counts fine rows only), until their part falls due
        /// (``versionMaxAge``), or the next part at each seal while this many are held: a version
        /// row is then merged into its bytes about once per ``versionMaxAge`` instead of once per
        /// seal. It trades memory for the writer's and the prepare's time
        /// (BENCHMARKS.md, "The explorer's version rows held unsealed, and the sketch's sparse
        /// buckets", "The explorer's rows pending as bytes").
        var versionMaxRows = 0

        /// Fine rows a prepare reads before it may write the rest unread
        /// (``ExplorerWorker/defaultFineProbe``; 0: none read while few are found, as tests force).
        var fineProbe = ExplorerWorker.defaultFineProbe

        /// Cached rows a fold writes at most once it has written one part of them: more parts
        /// while they are small (several seals' parts fall due at once), one at a time once they
        /// are not (a seal's ~4,000–13,000 fine rows of the iOS 27 load, written in one fold,
        /// took 15–48 ms).
        var cacheRowsPerFold = 1_024

        /// Whether version rows stay unsealed between cache writes.
        var holdsVersions: Bool { versionMaxRows > 0 }

        /// Rows added beside a running prepare at most before the writer waits for it: what bounds
        /// the memory while a prepare runs behind the door (the worker goes on adding meanwhile).
        /// Half of ``maxRows``: at twice it the iOS 27 load peaked at 174–178 MB, at it 157–163, at
        /// half 153–154. Four times it while a seal that took a part of the version rows held
        /// unsealed is prepared (`preparingHeldVersions`): thousands of them at once, a long
        /// prepare, and waiting at half put a third of a second into the iOS 27 load's p99.
        func crowdLimit(preparingHeldVersions: Bool) -> Int {
            holdsVersions && preparingHeldVersions ? 4 * maxRows : (maxRows + 1) / 2
        }
    }
}
