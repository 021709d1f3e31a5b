import Foundation
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP connection to 127.0.0.1, for what an HTTP client library will not do: send half a
/// request, headers without their body, then watch what the server does.
package final class RawConnection: Sendable {
    private let fd: Int32

    package init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(fd)
            throw TestFailure("connect() to 127.0.0.1:\(port) failed")
        }
    }

    deinit { close(fd) }

    /// Sends `text` (or raises when the server has closed the connection).
    package func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw TestFailure("send() failed: the connection is closed") }
    }

    /// What arrives within `timeout`, until the server closes the connection or `timeout` passes;
    /// `closed` tells whether it closed. The waiting happens on NIO's blocking pool, never on
    /// the cooperative pool the servers under test need.
    package func receive(timeout: Duration) async throws -> (text: String, closed: Bool) {
        try await NIOThreadPool.singleton.runIfActive { self.blockingReceive(timeout: timeout) }
    }

    private func blockingReceive(timeout: Duration) -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let left = ContinuousClock.now.duration(to: deadline)
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(
                max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (String(decoding: received, as: UTF8.self), true) }
            received += buffer.prefix(count)
            // A complete response with Content-Length: stop there.
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n"), let length = Self.contentLength(text[..<end.lowerBound]),
                received.count >= text.utf8.distance(from: text.startIndex, to: end.upperBound) + length
            {
                return (text, false)
            }
        }
        return (String(decoding: received, as: UTF8.self), false)
    }

    private static func contentLength(_ head: Substring) -> Int? {
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                return Int(parts[1].trimmingCharacters(in: .whitespaces))
            }
        }
        return nil
    }
}
