import Foundation
import ZIPFoundation

/// Bounds on a zip of `.dSYM` bundles: the archive is hostile until read (a symbols key is a CI
/// secret, but it leaks like any other), so nothing in it is trusted: not its sizes, not its names.
package struct SymbolArchiveLimits: Sendable, Equatable {
    /// Entries in the central directory (files and folders).
    package var maxEntries = 20_000
    /// Bytes decompressed in all, counted as they come out (the sizes the archive declares are
    /// checked first, then the real ones: a lying header stops at this bound too).
    package var maxExtractedBytes: Int64 = 4 << 30
    /// Uncompressed / compressed of one entry: DWARF packs about 4:1, a zip bomb 1000:1 and more.
    package var maxRatio: Int64 = 200

    package init(maxEntries: Int = 20_000, maxExtractedBytes: Int64 = 4 << 30, maxRatio: Int64 = 200) {
        self.maxEntries = maxEntries
        self.maxExtractedBytes = maxExtractedBytes
        self.maxRatio = maxRatio
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
    /// Xcode archives and CI produce them) is taken; the whole archive is refused when an entry's
    /// path is absolute or climbs out (`..`), an entry is a link, or a bound of `limits` is
    /// passed. Entries are never written under their own names. File work only, no database:
    /// servers call it off the store threads.
    package static func extractArchive(
        _ zip: URL, into directory: URL, limits: SymbolArchiveLimits = SymbolArchiveLimits()
    ) throws(StoreError) -> [(file: URL, binaryName: String)] {
        let archive: Archive
        do {
            archive = try Archive(url: zip, accessMode: .read)
        } catch {
            throw StoreError(.invalid, "not a readable zip archive: \(error)")
        }
        var entries: [Entry] = []
        var declared: Int64 = 0
        var count = 0
        for entry in archive {
            count += 1
            guard count <= limits.maxEntries else {
                throw StoreError(.invalid, "the zip has more than \(limits.maxEntries) entries")
            }
            if let problem = Self.unsafePath(entry.path) {
                throw StoreError(.invalid, "unsafe path in the zip: \(problem): \(Self.printable(entry.path))")
            }
            guard entry.type != .symlink else {
                throw StoreError(.invalid, "the zip holds a symbolic link: \(Self.printable(entry.path))")
            }
            guard entry.type == .file, Self.isDWARFEntry(entry.path) else { continue }
            let size = Int64(clamping: entry.uncompressedSize)
            let packed = max(Int64(clamping: entry.compressedSize), 1)
            guard size / packed <= limits.maxRatio else {
                throw StoreError(
                    .invalid,
                    "\(Self.printable(entry.path)) expands \(size / packed):1 (over \(limits.maxRatio):1): refused as a zip bomb"
                )
            }
            declared += size
            guard declared <= limits.maxExtractedBytes else {
                throw StoreError(.invalid, "the zip's DWARF files are over \(limits.maxExtractedBytes) bytes")
            }
            entries.append(entry)
        }
        guard !entries.isEmpty else {
            throw StoreError(
                .invalid, "no DWARF file in the zip (expected <name>.dSYM/Contents/Resources/DWARF/<name>)")
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(.unavailable, "cannot create \(directory.path)", cause: "\(error)")
        }
        var extracted: Int64 = 0
        var files: [(file: URL, binaryName: String)] = []
        do throws(StoreError) {
            for entry in entries {
                let temporary = directory.appendingPathComponent("zip-\(UUID().uuidString).partial")
                files.append((temporary, entry.path.split(separator: "/").last.map(String.init) ?? "binary"))
                try extract(entry, of: archive, to: temporary, extracted: &extracted, limits: limits)
            }
        } catch {
            for item in files { try? FileManager.default.removeItem(at: item.file) }
            throw error
        }
        return files
    }

    /// Writes one entry to `file`, counting the bytes that really come out against the declared size
    /// and the archive's bound (ZIPFoundation checks the CRC).
    private static func extract(
        _ entry: Entry, of archive: Archive, to file: URL, extracted: inout Int64, limits: SymbolArchiveLimits
    ) throws(StoreError) {
        guard FileManager.default.createFile(atPath: file.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: file)
        else { throw StoreError(.unavailable, "cannot write \(file.path)") }
        defer { try? handle.close() }
        let declared = Int64(clamping: entry.uncompressedSize)
        var written: Int64 = 0
        var total = extracted
        do {
            _ = try archive.extract(entry) { chunk in
                written += Int64(chunk.count)
                total += Int64(chunk.count)
                guard written <= declared, total <= limits.maxExtractedBytes else {
                    throw StoreError(
                        .invalid, "\(Self.printable(entry.path)) decompresses past its declared \(declared) bytes")
                }
                try handle.write(contentsOf: chunk)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.invalid, "cannot read \(Self.printable(entry.path)) from the zip: \(error)")
        }
        extracted = total
    }

    /// Why `path` may not be an entry name (absolute, climbing out, a Windows drive, a NUL), or nil.
    static func unsafePath(_ path: String) -> String? {
        if path.hasPrefix("/") || path.hasPrefix("\\") { return "absolute path" }
        if path.utf8.contains(0) { return "NUL in the name" }
        let parts = path.split(omittingEmptySubsequences: false) { $0 == "/" || $0 == "\\" }
        if parts.contains("..") { return "climbs out with .." }
        if let first = parts.first, first.count == 2, first.last == ":" { return "drive letter" }
        return nil
    }

    /// `X.dSYM/Contents/Resources/DWARF/X` (at any depth, macOS metadata folders left out).
    static func isDWARFEntry(_ path: String) -> Bool {
        let parts = path.split(separator: "/")
        guard parts.count >= 4, !parts.contains("__MACOSX"), !(parts.last?.hasPrefix("._") ?? true) else {
            return false
        }
        let n = parts.count
        return parts[n - 2] == "DWARF" && parts[n - 3] == "Resources" && parts[n - 4] == "Contents"
    }

    /// An entry name as it may appear in a message: bounded, control characters escaped.
    static func printable(_ path: String) -> String {
        let text = String(path.unicodeScalars.prefix(200).map { $0.value < 0x20 ? "?" : Character($0) })
        return "\"\(text)\""
    }
}
