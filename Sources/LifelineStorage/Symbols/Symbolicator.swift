import Foundation
import LifelineAnalysis
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

@_silgen_name("swift_demangle")
private func runtimeDemangle(
    _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int, _ outputBuffer: UnsafeMutablePointer<CChar>?,
    _ outputBufferSize: UnsafeMutablePointer<Int>?, _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// Turns (DWARF file, address) into function, file and line with a pool of long-running
/// `llvm-symbolizer` processes (JSON output, inlined frames); C++ names demangled by
/// llvm-symbolizer, Swift names by the Swift runtime's `swift_demangle`. Answers are cached per
/// file version (a file is named by its UUID; a re-upload of the UUID is a new version).
///
/// A file that fails is remembered: when the process dies answering a request for it (on a fresh
/// process too) the file is ``SymbolFileFailure/crashed``, when no answer comes within
/// ``requestTimeout`` it is ``SymbolFileFailure/timedOut`` (the process is killed); either way every
/// later request for that version of the file fails at once without asking a process, and only
/// the first is answered `first: true`, for the store to record. A dead process is replaced on the
/// next request.
///
/// Blocking: call it from a store thread, never from the cooperative pool. Each process serves one
/// request at a time; requests are spread over the pool in turn.
package final class Symbolicator: Sendable {
    /// What a request gave.
    package enum Answer: Sendable, Equatable {
        /// The symbols at the address (empty when unknown, or when no process could be started).
        case symbols([FrameSymbol])
        /// The file is unusable; `first` only for the request that found it out.
        case failed(SymbolFileFailure, first: Bool)
    }

    private struct Key: Hashable {
        var file: String
        var version: Int64
        var address: UInt64
    }

    private struct FileState {
        var version: Int64
        var failure: SymbolFileFailure?
    }

    private final class Child {
        let process: Process
        let input: FileHandle
        let output: FileHandle
        var buffer: [UInt8] = []

        init(process: Process, input: FileHandle, output: FileHandle) {
            self.process = process
            self.input = input
            self.output = output
        }

        /// Kills the process (SIGKILL: it may be stuck) and closes its input.
        func stop() {
            try? input.close()
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// One process of the pool, behind its own lock.
    private final class Slot: Sendable {
        let child = Mutex<Child?>(nil)
    }

    private enum Outcome {
        case line([UInt8])
        case failed(SymbolFileFailure)
        case unavailable
    }

    private enum Read {
        case line([UInt8])
        case closed
        case timedOut
    }

    /// The executable used.
    package let executable: String
    /// How long one request may take before its process is killed and its file marked unusable.
    package let requestTimeout: Duration
    private let children: [Slot]
    private let turn = Atomic<Int>(0)
    private let cache = Mutex<[Key: [FrameSymbol]]>([:])
    private let files = Mutex<[String: FileState]>([:])
    static let cacheLimit = 50_000
    private static let crashedFiles = Atomic<Int>(0)
    private static let timedOutFiles = Atomic<Int>(0)

    /// A symbolicator using `executable`, or `llvm-symbolizer` (or `llvm-symbolizer-N`) found on
    /// `PATH`, with `processes` processes (started on first use) and `requestTimeout` per request
    /// (a large dSYM's first request parses it: seconds); nil when there is none.
    package init?(executable: String? = nil, processes: Int = 2, requestTimeout: Duration = .seconds(10)) {
        if let executable {
            guard FileManager.default.isExecutableFile(atPath: executable) else { return nil }
            self.executable = executable
        } else {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            // Debian's llvm-N packages install it with the version as a suffix only.
            let names = ["llvm-symbolizer"] + (14...20).reversed().map { "llvm-symbolizer-\($0)" }
            let candidates = names.flatMap { name in path.split(separator: ":").map { "\($0)/\(name)" } }
            guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
                return nil
            }
            self.executable = found
        }
        self.requestTimeout = requestTimeout
        self.children = (0..<max(processes, 1)).map { _ in Slot() }
    }

    deinit {
        stopAll()
    }

    /// Symbol files this process found unusable since it started, by reason (for `/metrics`).
    package static func unusableFiles(_ reason: SymbolFileFailure) -> Int {
        switch reason {
        case .crashed: crashedFiles.load(ordering: .relaxed)
        case .timedOut: timedOutFiles.load(ordering: .relaxed)
        }
    }

    /// The symbols at `address` of the DWARF file `file`: the function at the address first, then
    /// the functions it was inlined into, outermost last; empty when unknown or when the file is
    /// unusable.
    package func symbolicate(file: String, address: UInt64) -> [FrameSymbol] {
        guard case .symbols(let symbols) = symbolicate(file: file, version: 0, address: address) else { return [] }
        return symbols
    }

    /// The answer for `address` of version `version` of `file` (its upload time: a new version
    /// forgets the old one's failure and answers, and restarts the processes, which keep files open).
    package func symbolicate(file: String, version: Int64, address: UInt64) -> Answer {
        let (known, changed) = files.withLock { files -> (SymbolFileFailure?, Bool) in
            guard let state = files[file] else {
                files[file] = FileState(version: version, failure: nil)
                return (nil, false)
            }
            guard state.version == version else {
                files[file] = FileState(version: version, failure: nil)
                return (nil, true)
            }
            return (state.failure, false)
        }
        if let known { return .failed(known, first: false) }
        if changed { stopAll() }
        let key = Key(file: file, version: version, address: address)
        if let cached = cache.withLock({ $0[key] }) { return .symbols(cached) }
        let slot = children[turn.wrappingAdd(1, ordering: .relaxed).oldValue % children.count]
        let (executable, timeout) = (self.executable, requestTimeout)
        let outcome = slot.child.withLock { child in
            Self.request(&child, executable: executable, file: file, address: address, timeout: timeout)
        }
        switch outcome {
        case .unavailable:
            return .symbols([])
        case .failed(let failure):
            let first = files.withLock { files in
                guard files[file]?.version == version, files[file]?.failure == nil else { return false }
                files[file] = FileState(version: version, failure: failure)
                return true
            }
            if first {
                switch failure {
                case .crashed: Self.crashedFiles.add(1, ordering: .relaxed)
                case .timedOut: Self.timedOutFiles.add(1, ordering: .relaxed)
                }
            }
            return .failed(files.withLock { $0[file]?.failure } ?? failure, first: first)
        case .line(let line):
            let symbols = Self.parse(line)
            cache.withLock { cache in
                if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
                cache[key] = symbols
            }
            return .symbols(symbols)
        }
    }

    /// Stops every process of the pool (each is started again on its next request).
    private func stopAll() {
        for slot in children {
            slot.child.withLock { child in
                child?.stop()
                child = nil
            }
        }
    }

    /// Sends one request and reads its one-line JSON answer. A process found dead before the
    /// request is replaced; one that dies answering is replaced and asked again once: a second
    /// death is the file's doing (crashed). No answer within `timeout`: killed, timed out.
    private static func request(
        _ slot: inout Child?, executable: String, file: String, address: UInt64, timeout: Duration
    ) -> Outcome {
        let quoted = "\"" + file.replacingOccurrences(of: "\"", with: "") + "\" 0x" + String(address, radix: 16) + "\n"
        var deaths = 0
        for _ in 0..<3 where deaths < 2 {
            if let child = slot, !child.process.isRunning {
                child.stop()
                slot = nil
            }
            guard let child = slot ?? start(executable) else { return .unavailable }
            slot = child
            do {
                try child.input.write(contentsOf: Data(quoted.utf8))
            } catch {
                child.stop()
                slot = nil
                continue
            }
            switch readLine(child, deadline: .now + timeout) {
            case .line(let line):
                return .line(line)
            case .timedOut:
                child.stop()
                slot = nil
                return .failed(.timedOut)
            case .closed:
                child.stop()
                slot = nil
                deaths += 1
            }
        }
        return deaths >= 2 ? .failed(.crashed) : .unavailable
    }

    private static func start(_ executable: String) -> Child? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        // C++ (Itanium) names are demangled by llvm-symbolizer; Swift's are left as they are and
        // demangled by the runtime below.
        process.arguments = ["--output-style=JSON", "--inlines", "--demangle", "--relativenames"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        return Child(process: process, input: input.fileHandleForWriting, output: output.fileHandleForReading)
    }

    /// One line of the child's output (without the newline), waiting until `deadline` at most.
    private static func readLine(_ child: Child, deadline: ContinuousClock.Instant) -> Read {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            if let newline = child.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(child.buffer[..<newline])
                child.buffer.removeSubrange(...newline)
                if line.isEmpty { continue }
                return .line(line)
            }
            let remaining = deadline - .now
            guard remaining > .zero else { return .timedOut }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: seconds * 1_000 + attoseconds / 1_000_000_000_000_000 + 1)
            var descriptor = pollfd(fd: child.output.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready >= 0 else { return .closed }
            if ready == 0 { continue }
            let count = chunk.withUnsafeMutableBytes { buffer in
                read(child.output.fileDescriptor, buffer.baseAddress, buffer.count)
            }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else { return .closed }
            child.buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// `{"Address": …, "Symbol": [{"FunctionName", "FileName", "Line"}, …]}` → symbols.
    static func parse(_ line: [UInt8]) -> [FrameSymbol] {
        struct Answer: Decodable {
            struct Entry: Decodable {
                var FunctionName: String?
                var FileName: String?
                var Line: Int?
            }
            var Symbol: [Entry]?
        }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(line)) else { return [] }
        return (answer.Symbol ?? []).compactMap { entry in
            let function = entry.FunctionName.flatMap { $0.isEmpty || $0 == "??" ? nil : demangle($0) }
            let file = entry.FileName.flatMap { $0.isEmpty || $0 == "??" ? nil : $0 }
            guard function != nil || file != nil else { return nil }
            return FrameSymbol(function: function, file: file, line: entry.Line.flatMap { $0 > 0 ? $0 : nil })
        }
    }

    /// A Swift symbol (`$s…`, `_$s…`) demangled by the runtime; other names as given.
    static func demangle(_ name: String) -> String {
        let mangled = name.hasPrefix("_$s") ? String(name.dropFirst()) : name
        guard mangled.hasPrefix("$s") || mangled.hasPrefix("$S") else { return name }
        let result = mangled.withCString { pointer in runtimeDemangle(pointer, strlen(pointer), nil, nil, 0) }
        guard let result else { return name }
        defer { free(result) }
        return String(cString: result)
    }
}
