import Foundation
import ZIPFoundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Bounds on a zip of `.dSYM` bundles: the archive is hostile until read (a symbols key is a CI
/// secret, but it leaks like any other), so nothing in it is trusted: not its sizes, not its names.
/// Like an ingest body, an upload is bounded in what it may inflate to (in all, and per byte sent:
/// ``maxRatio`` per entry, so never more than ``maxRatio`` times the upload) and in the time it may
/// take (``maxCPUSeconds``).
package struct SymbolArchiveLimits: Sendable, Equatable {
    /// Entries in the central directory (files and folders). Default 20,000.
    package var maxEntries = 20_000
    /// Size of the central directory, read whole before anything is inflated. Default 32 MiB.
    package var maxDirectoryBytes = 32 << 20
    /// Bytes decompressed in all, counted as they come out (the sizes the archive declares are
    /// checked first, then the real ones: a lying header stops at this bound too). Default 4 GiB.
    package var maxExtractedBytes: Int64 = 4 << 30
    /// Uncompressed / compressed of one entry: DWARF packs about 4:1, a zip bomb 1000:1 and more.
    /// Default 200.
    package var maxRatio: Int64 = 200
    /// CPU time of one core the inflating of one upload may take (`symbols.upload_cpu_seconds`).
    /// Default 60 s: a 4 GiB archive of DWARF inflates in about 15 s.
    package var maxCPUSeconds: Double = 60

    package init(
        maxEntries: Int = 20_000, maxDirectoryBytes: Int = 32 << 20, maxExtractedBytes: Int64 = 4 << 30,
        maxRatio: Int64 = 200, maxCPUSeconds: Double = 60
    ) {
        self.maxEntries = maxEntries
        self.maxDirectoryBytes = maxDirectoryBytes
        self.maxExtractedBytes = maxExtractedBytes
        self.maxRatio = maxRatio
        self.maxCPUSeconds = maxCPUSeconds
    }
}

extension SymbolFiles {
    /// Whether `file` starts with a zip's local file header (or is an empty zip).
    package static func isZip(_ file: URL) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return false }
        defer { try? handle.close() }
        guard let magic = try? handle.read(upToCount: 4), magic.count == 4 else { return false }
        return magic.elementsEqual([0x50, 0x4B, 0x03, 0x04]) || magic.elementsEqual([0x50, 0x4B, 0x05, 0x06])
    }

    /// The DWARF files of a zip, each decompressed into a temporary file of `directory` (the
    /// caller removes them), within `limits`: every `*.dSYM/Contents/Resources/DWARF/<name>` (as
    /// Xcode archives and CI produce them) is taken. The central directory is read and checked
    /// first (``ZipDirectory``), before anything is inflated: the whole archive is refused when it
    /// has no end record where the format puts it, its directory does not fit the file, an entry's
    /// path is absolute or climbs out (`..`), an entry is a link, or a bound of `limits` is passed
    /// by what the entries declare; then by what really comes out, and by the CPU time spent.
    /// Entries are never written under their own names. File work only, no database: servers call
    /// it off the store threads (it keeps one thread busy; its CPU time is that thread's).
    package static func extractArchive(
        _ zip: URL, into directory: URL, limits: SymbolArchiveLimits = SymbolArchiveLimits()
    ) throws(SymbolArchiveError) -> [(file: URL, binaryName: String)] {
        let budget = CPUBudget(seconds: limits.maxCPUSeconds)
        let declared = try ZipDirectory.read(zip, limits: limits)
        guard !declared.dwarfEntries.isEmpty else {
            throw SymbolArchiveError(
                .noDWARF, "no DWARF file in the zip (expected <name>.dSYM/Contents/Resources/DWARF/<name>)")
        }
        // ZIPFoundation finds the same end record (the last in the tail) at once, and reads the
        // directory checked above.
        let archive: Archive
        do {
            archive = try Archive(url: zip, accessMode: .read)
        } catch {
            throw SymbolArchiveError(.invalidZip, "not a readable zip archive: \(error)")
        }
        var entries: [Entry] = []
        var count = 0
        for entry in archive {
            count += 1
            guard count <= declared.entries.count else {
                throw SymbolArchiveError(.invalidZip, "the zip has more entries than its directory declares")
            }
            guard entry.type != .symlink else {
                throw SymbolArchiveError(
                    .unsafeEntry, "the zip holds a symbolic link: \(Self.printable(entry.path))")
            }
            if let problem = Self.unsafePath(entry.path) {
                throw SymbolArchiveError(
                    .unsafeEntry, "unsafe path in the zip: \(problem): \(Self.printable(entry.path))")
            }
            guard entry.type == .file, Self.isDWARFEntry(entry.path) else { continue }
            // The checked directory's entry of the same place: same sizes, or the archive is refused.
            let checked = declared.entries[count - 1]
            guard checked.uncompressedSize == entry.uncompressedSize, checked.compressedSize == entry.compressedSize,
                SymbolFiles.isDWARFEntry(checked.path)
            else {
                throw SymbolArchiveError(
                    .invalidZip, "\(Self.printable(entry.path)) is read differently from its directory entry")
            }
            entries.append(entry)
        }
        guard !entries.isEmpty else {
            throw SymbolArchiveError(
                .noDWARF, "no DWARF file in the zip (expected <name>.dSYM/Contents/Resources/DWARF/<name>)")
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw SymbolArchiveError(.unavailable, "cannot store the inflated files")
        }
        var extracted: Int64 = 0
        var files: [(file: URL, binaryName: String)] = []
        do throws(SymbolArchiveError) {
            for entry in entries {
                let temporary = directory.appendingPathComponent("zip-\(UUID().uuidString).partial")
                files.append((temporary, entry.path.split(separator: "/").last.map(String.init) ?? "binary"))
                try extract(entry, of: archive, to: temporary, extracted: &extracted, limits: limits, budget: budget)
            }
        } catch {
            for item in files { try? FileManager.default.removeItem(at: item.file) }
            throw error
        }
        return files
    }

    /// Writes one entry to `file`, counting the bytes that really come out against the declared size
    /// and the archive's bound, and the CPU time against `budget` (ZIPFoundation checks the CRC).
    private static func extract(
        _ entry: Entry, of archive: Archive, to file: URL, extracted: inout Int64, limits: SymbolArchiveLimits,
        budget: CPUBudget
    ) throws(SymbolArchiveError) {
        guard FileManager.default.createFile(atPath: file.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: file)
        else { throw SymbolArchiveError(.unavailable, "cannot store the inflated files") }
        defer { try? handle.close() }
        let declared = Int64(clamping: entry.uncompressedSize)
        var written: Int64 = 0
        var total = extracted
        do {
            _ = try archive.extract(entry) { chunk in
                written += Int64(chunk.count)
                total += Int64(chunk.count)
                guard written <= declared else {
                    throw SymbolArchiveError(
                        .tooLarge, "\(Self.printable(entry.path)) decompresses past its declared \(declared) bytes")
                }
                guard total <= limits.maxExtractedBytes else {
                    throw SymbolArchiveError(
                        .tooLarge, "the zip's DWARF files decompress past \(limits.maxExtractedBytes) bytes")
                }
                guard !budget.isSpent else {
                    throw SymbolArchiveError(
                        .overBudget,
                        "inflating the zip took more than \(limits.maxCPUSeconds) s of CPU "
                            + "(\(total) bytes out): refused")
                }
                try handle.write(contentsOf: chunk)
            }
        } catch let error as SymbolArchiveError {
            throw error
        } catch {
            throw SymbolArchiveError(.invalidZip, "cannot read \(Self.printable(entry.path)) from the zip: \(error)")
        }
        extracted = total
    }

    /// Why `path` may not be an entry name (absolute, climbing out, a Windows drive, a NUL), or nil.
    package static func unsafePath(_ path: String) -> String? {
        if path.hasPrefix("/") || path.hasPrefix("\\") { return "absolute path" }
        if path.utf8.contains(0) { return "NUL in the name" }
        let parts = path.split(omittingEmptySubsequences: false) { $0 == "/" || $0 == "\\" }
        if parts.contains("..") { return "climbs out with .." }
        if let first = parts.first, first.count == 2, first.last == ":" { return "drive letter" }
        return nil
    }

    /// `X.dSYM/Contents/Resources/DWARF/X` (at any depth, macOS metadata folders left out).
    package static func isDWARFEntry(_ path: String) -> Bool {
        let parts = path.split(separator: "/")
        guard parts.count >= 4, !parts.contains("__MACOSX"), !(parts.last?.hasPrefix("._") ?? true) else {
            return false
        }
        let n = parts.count
        return parts[n - 2] == "DWARF" && parts[n - 3] == "Resources" && parts[n - 4] == "Contents"
    }

    /// An entry name as it may appear in a message: bounded, control characters escaped.
    package static func printable(_ path: String) -> String {
        let text = String(path.unicodeScalars.prefix(200).map { $0.value < 0x20 ? "?" : Character($0) })
        return "\"\(text)\""
    }
}

/// The CPU time of the calling thread since this was made, against a bound: what one upload's
/// inflating may cost (the work runs on one thread of NIO's blocking pool).
struct CPUBudget {
    let start: Double
    let seconds: Double

    init(seconds: Double) {
        self.seconds = seconds
        self.start = Self.threadSeconds()
    }

    /// Whether the thread has spent more than ``seconds`` since.
    var isSpent: Bool { Self.threadSeconds() - start > seconds }

    /// `CLOCK_THREAD_CPUTIME_ID` in seconds.
    static func threadSeconds() -> Double {
        var time = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) == 0 else { return 0 }
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
