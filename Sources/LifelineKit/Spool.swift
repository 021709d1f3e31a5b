import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One report in the spool.
struct SpooledReport: Sendable, Hashable {
    /// The SHA-256 of its bytes (its file name).
    var id: String
    var kind: ReportKind
    /// Bytes on disk.
    var size: Int
    /// When it was spooled (its file's modification time).
    var date: Date
}

/// A file-system call failed.
struct SpoolError: Error, CustomStringConvertible {
    var description: String
    init(_ operation: String, _ path: String, errno code: Int32 = errno) {
        description = "\(operation) \(path): \(String(cString: strerror(code)))"
    }
}

/// The on-disk spool: `metric/<sha256>.json`, `diagnostic/<sha256>.json`, partial writes in `tmp/`, empty
/// markers of delivered reports in `delivered/`, and the consent in `consent`.
///
/// A report is written to `tmp/`, fsynced, renamed into place and the directory fsynced, so a file under
/// its kind's directory is always whole; a file whose bytes do not hash to its name is never uploaded.
struct Spool: Sendable {
    let directory: URL

    private var temporary: URL { directory.appendingPathComponent("tmp", isDirectory: true) }
    private var delivered: URL { directory.appendingPathComponent("delivered", isDirectory: true) }
    private func folder(_ kind: ReportKind) -> URL {
        directory.appendingPathComponent(kind.rawValue, isDirectory: true)
    }
    func url(of report: SpooledReport) -> URL { file(report.id, report.kind) }
    private func file(_ id: String, _ kind: ReportKind) -> URL { folder(kind).appendingPathComponent(id + ".json") }

    /// Opens (creating) the spool and deletes partial writes older than `staleAfter` (a process killed mid-write).
    init(directory: URL, staleAfter: TimeInterval = 60) throws {
        self.directory = directory
        for url in [directory, temporary, delivered] + ReportKind.allCases.map(folder) {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        let now = Date()
        for entry in Self.entries(temporary) where now.timeIntervalSince(entry.date) > staleAfter {
            unlink(entry.url.path)
        }
    }

    /// Writes `data` as a report of `kind` (atomic write, fsync, rename); `false` when the same bytes were
    /// there already.
    func write(_ data: Data, id: String, kind: ReportKind) throws -> Bool {
        let target = file(id, kind)
        if FileManager.default.fileExists(atPath: target.path) { return false }
        let partial = temporary.appendingPathComponent("\(id).\(UUID().uuidString).partial")
        try Self.writeDurably(data, to: partial)
        guard rename(partial.path, target.path) == 0 else {
            let code = errno
            unlink(partial.path)
            throw SpoolError("rename", target.path, errno: code)
        }
        Self.syncDirectory(folder(kind))
        return true
    }

    /// Every whole report, oldest first.
    func reports() -> [SpooledReport] {
        ReportKind.allCases.flatMap { kind in
            Self.entries(folder(kind)).compactMap { entry -> SpooledReport? in
                let name = entry.url.lastPathComponent
                guard name.hasSuffix(".json") else { return nil }
                return SpooledReport(id: String(name.dropLast(5)), kind: kind, size: entry.size, date: entry.date)
            }
        }.sorted { ($0.date, $0.id) < ($1.date, $1.id) }
    }

    /// The bytes of `report` if its file is there and hashes to its name; `nil` if it is gone (delivered or
    /// evicted by another process); ``Damaged`` if it does not match.
    func read(_ report: SpooledReport) throws -> Data? {
        guard let data = FileManager.default.contents(atPath: url(of: report).path) else { return nil }
        guard ContentHash.hex(data) == report.id else { throw Damaged() }
        return data
    }

    /// A spooled file whose bytes do not hash to its name.
    struct Damaged: Error {}

    /// Deletes a report (no error if it is gone already).
    func remove(_ report: SpooledReport) {
        unlink(url(of: report).path)
    }

    /// Notes that `id` was delivered, so the same bytes submitted again are not sent again.
    func markDelivered(_ id: String) {
        let fd = open(delivered.appendingPathComponent(id).path, O_CREAT | O_WRONLY, 0o644)
        if fd >= 0 { close(fd) }
    }

    /// Whether `id` was delivered (and its marker not yet pruned).
    func wasDelivered(_ id: String) -> Bool {
        FileManager.default.fileExists(atPath: delivered.appendingPathComponent(id).path)
    }

    /// Deletes delivery markers older than `age`.
    func pruneMarkers(olderThan age: TimeInterval) {
        let now = Date()
        for entry in Self.entries(delivered) where now.timeIntervalSince(entry.date) > age { unlink(entry.url.path) }
    }

    /// Deletes every report, partial write and marker (consent denied); the consent file stays.
    func removeAll() {
        for url in [temporary, delivered] + ReportKind.allCases.map(folder) {
            for entry in Self.entries(url) { unlink(entry.url.path) }
        }
    }

    /// The persisted consent, if any.
    func storedConsent() -> Consent? {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent("consent").path) else {
            return nil
        }
        return Consent(rawValue: String(decoding: data, as: UTF8.self))
    }

    /// Persists `consent` (atomic write).
    func storeConsent(_ consent: Consent) throws {
        let partial = temporary.appendingPathComponent("consent.\(UUID().uuidString).partial")
        try Self.writeDurably(Data(consent.rawValue.utf8), to: partial)
        let target = directory.appendingPathComponent("consent")
        guard rename(partial.path, target.path) == 0 else { throw SpoolError("rename", target.path) }
        Self.syncDirectory(directory)
    }

    // MARK: - POSIX

    private static func writeDurably(_ data: Data, to url: URL) throws {
        let fd = open(url.path, O_CREAT | O_EXCL | O_WRONLY, 0o644)
        guard fd >= 0 else { throw SpoolError("open", url.path) }
        var failure: SpoolError?
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < bytes.count, let base = bytes.baseAddress {
                let written = Glue.write(fd, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = SpoolError("write", url.path)
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = SpoolError("fsync", url.path) }
        close(fd)
        if let failure {
            unlink(url.path)
            throw failure
        }
    }

    private static func syncDirectory(_ url: URL) {
        let fd = open(url.path, O_RDONLY)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    private struct Entry {
        var url: URL
        var size: Int
        var date: Date
    }

    private static func entries(_ directory: URL) -> [Entry] {
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey, .isRegularFileKey]
        let urls =
            (try? FileManager.default.contentsOfDirectory(
                at: directory, includingPropertiesForKeys: keys, options: [.skipsHiddenFiles])) ?? []
        return urls.compactMap { url in
            guard let values = try? url.resourceValues(forKeys: Set(keys)), values.isRegularFile == true else {
                return nil
            }
            return Entry(url: url, size: values.fileSize ?? 0, date: values.contentModificationDate ?? .distantPast)
        }
    }
}

/// libc's `write`, named apart from the methods called `write`.
private enum Glue {
    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
            return Glibc.write(fd, buffer, count)
        #elseif canImport(Musl)
            return Musl.write(fd, buffer, count)
        #else
            return Darwin.write(fd, buffer, count)
        #endif
    }
}
