import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A tiny real HTTP/1.1 server on 127.0.0.1 (POSIX sockets, one thread) answering requests from a script,
/// for the answers a real `lifeline serve` cannot be made to give on demand (a 429 storm at set instants,
/// a 500). It records when each request arrived, its headers and its body. Every answer closes the connection.
final class ScriptedServer: @unchecked Sendable {
    struct Answer: Sendable {
        var status: Int
        var headers: [String: String] = [:]
        var body: String = ""
    }

    struct Request: Sendable {
        var arrived: ContinuousClock.Instant
        /// When the answer to it was written.
        var answered: ContinuousClock.Instant
        var path: String
        var headers: [String: String]
        var body: Data
        var status: Int
    }

    let port: Int
    private let fd: Int32
    private let lock = NSLock()
    private var script: [Answer]
    private let fallback: Answer
    private var log: [Request] = []
    /// `fd` is open (the serving thread closes it when `accept` fails).
    private var listening = true

    /// Answers with `script` in order, then `fallback` forever.
    init(script: [Answer], fallback: Answer) throws {
        self.script = script
        self.fallback = fallback
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket() failed") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = fd
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0 && listen(fd, 64) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw TestFailure("bind() failed")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in self.serve() }
        thread.start()
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

    var requests: [Request] {
        lock.lock()
        defer { lock.unlock() }
        return log
    }

    /// Stops accepting: wakes the thread's `accept`, and the thread closes the socket. (Closing it here could let
    /// the thread, between two requests, `accept` on a descriptor number already reused by the next test's server.)
    func close() {
        lock.lock()
        defer { lock.unlock() }
        if listening { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func serve() {
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 && errno == EINTR { continue }
            guard client >= 0 else { break }
            handle(client)
            Glibc.close(client)
        }
        lock.lock()
        listening = false
        Glibc.close(fd)
        lock.unlock()
    }

    private func handle(_ client: Int32) {
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var arrived: ContinuousClock.Instant?
        var headerEnd: Int?
        var contentLength = 0
        while true {
            let n = recv(client, &chunk, chunk.count, 0)
            guard n > 0 else { return }
            if arrived == nil { arrived = .now }
            buffer.append(contentsOf: chunk[0..<n])
            if headerEnd == nil, let end = Self.find([13, 10, 13, 10], in: buffer) {
                headerEnd = end + 4
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                for line in head.split(separator: "\r\n").dropFirst() {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    if parts.count == 2, parts[0].lowercased() == "content-length" {
                        contentLength = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
                    }
                }
            }
            if let headerEnd, buffer.count >= headerEnd + contentLength { break }
        }
        guard let headerEnd, let arrived else { return }
        let head = String(decoding: buffer[0..<(headerEnd - 4)], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let path = lines.first.map { $0.split(separator: " ").dropFirst().first.map(String.init) ?? "" } ?? ""
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 {
                headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        lock.lock()
        let answer = script.isEmpty ? fallback : script.removeFirst()
        lock.unlock()
        var response = "HTTP/1.1 \(answer.status) Scripted\r\nContent-Type: application/json\r\n"
        response += "Content-Length: \(answer.body.utf8.count)\r\nConnection: close\r\n"
        for (name, value) in answer.headers { response += "\(name): \(value)\r\n" }
        response += "\r\n" + answer.body
        let bytes = Array(response.utf8)
        // Logged before the answer leaves, so a client that has its answer finds the request logged.
        lock.lock()
        log.append(
            Request(
                arrived: arrived, answered: .now, path: path, headers: headers,
                body: Data(buffer[headerEnd...]), status: answer.status))
        lock.unlock()
        _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where Array(haystack[i..<(i + needle.count)]) == needle {
            return i
        }
        return nil
    }
}
