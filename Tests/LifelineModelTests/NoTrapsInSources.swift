import Foundation
import LifelineTestFixtures
import Testing

/// A reviewable rule for issue 11: nothing in `Sources/` may trap on input. This test reads every
/// Swift file under `Sources/` (the generated `Embedded*.swift` excepted), blanks out comments and
/// string literals, and fails on each force unwrap (`x!`), `try!`, `as!`, implicitly unwrapped
/// optional (`: T!`), `fatalError`, `precondition`/`preconditionFailure` and `unsafelyUnwrapped`.
/// A new one must be written without the trap (`guard let`, `?? default`), not added to a list.
/// Trapping arithmetic cannot be found this way: sums of stored counts use
/// `addingSaturating`/`saturatingSum` (LifelineModel), and values are bounded at decode time.
@Suite("No traps in Sources")
struct NoTrapsInSources {
    static let sources: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    static let patterns: [(name: String, regex: String)] = [
        ("force unwrap", #"(?<!\btr)(?<!\ba)[\w\)\]\}>]![^=]"#),
        ("force unwrap at end of line", #"[\w\)\]\}]!$"#),
        ("try!", #"\btry!"#),
        ("as!", #"\bas!"#),
        ("fatalError", #"\bfatalError\s*\("#),
        ("precondition", #"\bprecondition(Failure)?\s*\("#),
        ("unsafelyUnwrapped", #"\bunsafelyUnwrapped\b"#),
    ]

    @Test("no force unwrap, try!, as!, fatalError or precondition in Sources/")
    func noTraps() async throws {
        let files = try #require(FileManager.default.enumerator(atPath: Self.sources.path))
            .compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") && !($0 as NSString).lastPathComponent.hasPrefix("Embedded") }
        #expect(files.count > 100, "found only \(files.count) files under \(Self.sources.path)")
        // The scan is long synchronous work: on a thread of its own, not on the pool every test shares.
        let findings = try await offPool {
            var findings: [String] = []
            for file in files {
                let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
                for (number, line) in Self.code(text).enumerated() {
                    for pattern in Self.patterns where line.range(of: pattern.regex, options: .regularExpression) != nil
                    {
                        findings.append(
                            "Sources/\(file):\(number + 1): \(pattern.name): \(line.trimmingCharacters(in: .whitespaces))"
                        )
                    }
                }
            }
            return findings
        }
        #expect(findings.isEmpty, "\(findings.count) trap(s):\n\(findings.joined(separator: "\n"))")
    }

    @Test("the scanner finds what it must and ignores strings and comments")
    func scannerWorks() {
        let sample = """
            let a = b!.c // x!
            let d = "e! f" + g
            let h = try! i()
            /* j!.k */ let l = m as! N
            let o = p != q
            let r = !s
            """
        let lines = Self.code(sample)
        func hits(_ line: String) -> [String] {
            Self.patterns.filter { line.range(of: $0.regex, options: .regularExpression) != nil }.map(\.name)
        }
        #expect(hits(lines[0]) == ["force unwrap"])
        #expect(hits(lines[1]).isEmpty)
        #expect(hits(lines[2]) == ["try!"])
        #expect(hits(lines[3]) == ["as!"])
        #expect(hits(lines[4]).isEmpty)
        #expect(hits(lines[5]).isEmpty)
    }

    /// The lines of `text` with comments and string literals (including multi-line and raw
    /// strings) replaced by spaces, so only code is matched.
    static func code(_ text: String) -> [String] {
        var out: [Character] = []
        let chars = Array(text)
        var i = 0
        var inBlockComment = 0
        var inString: (hashes: Int, multiline: Bool)?
        func at(_ k: Int) -> Character? { k < chars.count ? chars[k] : nil }
        while i < chars.count {
            let c = chars[i]
            if inBlockComment > 0 {
                if c == "*" && at(i + 1) == "/" {
                    inBlockComment -= 1
                    out += "  "
                    i += 2
                } else if c == "/" && at(i + 1) == "*" {
                    inBlockComment += 1
                    out += "  "
                    i += 2
                } else {
                    out.append(c == "\n" ? "\n" : " ")
                    i += 1
                }
                continue
            }
            if let string = inString {
                if c == "\\" && string.hashes == 0 {
                    out += "  "
                    i += 2
                    continue
                }
                let quotes = string.multiline ? 3 : 1
                if c == "\"" && (0..<quotes).allSatisfy({ at(i + $0) == "\"" })
                    && (0..<string.hashes).allSatisfy({ at(i + quotes + $0) == "#" })
                {
                    out += Array(repeating: " ", count: quotes + string.hashes)
                    i += quotes + string.hashes
                    inString = nil
                } else {
                    out.append(c == "\n" ? "\n" : " ")
                    i += 1
                }
                continue
            }
            if c == "/" && at(i + 1) == "/" {
                while i < chars.count && chars[i] != "\n" {
                    out.append(" ")
                    i += 1
                }
                continue
            }
            if c == "/" && at(i + 1) == "*" {
                inBlockComment = 1
                out += "  "
                i += 2
                continue
            }
            var hashes = 0
            while at(i + hashes) == "#" { hashes += 1 }
            if at(i + hashes) == "\"" {
                let multiline = at(i + hashes + 1) == "\"" && at(i + hashes + 2) == "\""
                let open = hashes + (multiline ? 3 : 1)
                out += Array(repeating: " ", count: open)
                i += open
                inString = (hashes, multiline)
                continue
            }
            out.append(c)
            i += 1
        }
        return String(out).components(separatedBy: "\n")
    }
}
