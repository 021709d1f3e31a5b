import ArgumentParser
import Foundation
import LifelineSQLite
import LifelineStorage

/// `lifeline compact`: re-deflates stored raw copies against a preset dictionary per app and kind.
struct CompactCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Shrink the stored raw documents of a SQLite database (a preset dictionary per app).",
        discussion: """
            Each raw document is stored as the client sent it (gzip). MetricKit's JSON repeats the \
            same keys in every document, which a 32 KB preset dictionary made from an app's own \
            documents lets deflate refer to: about 1 KB less per payload on the reference load. The \
            server does this behind its fold when the door is idle (database.raw_compaction, on by \
            default); this command does it offline, for the folded payloads the server has not \
            reached (documents acknowledged and not folded are folded first). Every rewritten copy \
            is read back and compared with the document before it is kept; each copy names its \
            dictionary, which the database keeps (table raw_dictionaries) and never changes. \
            Freed pages are reused by later documents; `lifeline prune` returns them to the disk.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "Payloads considered per transaction (1…10000).")
    var batch = 128

    @Flag(help: "Print the result as JSON on standard output.")
    var json = false

    func validate() throws {
        guard (1...10_000).contains(batch) else { throw ValidationError("--batch must be 1…10000, got \(batch)") }
    }

    func run() async throws {
        if global.isPostgres {
            throw CommandError(
                "compact works on a SQLite file; PostgreSQL keeps raw documents as received (gzip)")
        }
        let started = ContinuousClock.now
        let lastLine = LastLine()
        let (json, batch) = (self.json, self.batch)
        let report = try global.withFoldedSQLite(quiet: json) { database in
            try database.compactRawCopies(batch: batch) { done, total in
                guard !json, lastLine.due() else { return }
                printError("… \(done)/\(total) payloads considered")
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
            return
        }
        let elapsed = (ContinuousClock.now - started).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        let saved = report.bytesBefore - report.bytesAfter
        print(
            "considered \(report.considered) payloads, rewrote \(report.compacted) raw copies: "
                + "\(report.bytesBefore) → \(report.bytesAfter) bytes (\(saved) saved) in "
                + String(format: "%.1f", seconds) + " s")
        print(
            "in all: \(report.totalCompacted) copies rewritten, \(report.totalBytesBefore - report.totalBytesAfter) "
                + "bytes saved, \(report.dictionaries) dictionaries, every payload up to \(report.through) considered")
    }
}
