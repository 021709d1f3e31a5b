import Foundation
import LifelineAnalysis
import Synchronization

@_silgen_name("swift_demangle")
private func runtimeDemangle(
    _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int, _ outputBuffer: UnsafeMutablePointer<CChar>?,
    _ outputBufferSize: UnsafeMutablePointer<Int>?, _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// Turns (DWARF file, address) into function, file and line with a pool of long-running
/// `llvm-symbolizer` processes (JSON output, inlined frames); C++ names demangled by
/// llvm-symbolizer, Swift names by the Swift runtime's `swift_demangle`. Answers are cached (the
/// files never change: they are named by UUID).
///
/// Blocking: call it from a store thread, never from the cooperative pool. Each process serves one
/// request at a time; requests are spread over the pool in turn. A process that dies is started
/// again on its next request.
package final class Symbolicator: Sendable {
    private struct Key: Hashable {
        var file: String
        var address: UInt64
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
    }

    /// One process of the pool, behind its own lock.
    private final class Slot: Sendable {
        let child = Mutex<Child?>(nil)
    }

    /// The executable used.
    package let executable: String
    private let children: [Slot]
    private let turn = Atomic<Int>(0)
    private let cache = Mutex<[Key: [FrameSymbol]]>([:])
    static let cacheLimit = 50_000

    /// A symbolicator using `executable`, or `llvm-symbolizer` (or `llvm-symbolizer-N`) found on
    /// `PATH`, with `processes` processes (started on first use); nil when there is none.
    package init?(executable: String? = nil, processes: Int = 2) {
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
        self.children = (0..<max(processes, 1)).map { _ in Slot() }
    }

    deinit {
        for slot in children {
            slot.child.withLock { child in
                if let child {
                    try? child.input.close()
                    child.process.terminate()
                }
            }
        }
    }

    /// The symbols at `address` of the DWARF file `file`: the function at the address first, then
    /// the functions it was inlined into, outermost last; empty when unknown.
    package func symbolicate(file: String, address: UInt64) -> [FrameSymbol] {
        let key = Key(file: file, address: address)
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let slot = children[turn.wrappingAdd(1, ordering: .relaxed).oldValue % children.count]
        let executable = self.executable
        let line = slot.child.withLock { child in
            Self.request(&child, executable: executable, file: file, address: address)
        }
        guard let line else { return [] }
        let symbols = Self.parse(line)
        cache.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[key] = symbols
        }
        return symbols
    }

    /// Sends one request and reads its one-line JSON answer; restarts the process once if it died.
    private static func request(_ slot: inout Child?, executable: String, file: String, address: UInt64) -> [UInt8]? {
        let quoted = "\"" + file.replacingOccurrences(of: "\"", with: "") + "\" 0x" + String(address, radix: 16) + "\n"
        for _ in 0..<2 {
            guard let child = slot ?? start(executable) else { return nil }
            slot = child
            do {
                try child.input.write(contentsOf: Data(quoted.utf8))
                if let line = readLine(child) { return line }
            } catch {}
            child.process.terminate()
            slot = nil
        }
        return nil
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

    /// One line of the child's output (without the newline); nil at end of file.
    private static func readLine(_ child: Child) -> [UInt8]? {
        while true {
            if let newline = child.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(child.buffer[..<newline])
                child.buffer.removeSubrange(...newline)
                if line.isEmpty { continue }
                return line
            }
            let data = child.output.availableData
            guard !data.isEmpty else { return nil }
            child.buffer.append(contentsOf: data)
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
