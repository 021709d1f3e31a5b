import Foundation
import LifelinePostgres
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway PostgreSQL server for the tests: `initdb` into a temporary directory, `postgres`
/// started as a child on a free port of 127.0.0.1 (as the `postgres` user when the tests run as
/// root, as CI does: the server refuses root), trust authentication, fsync off. (`pg_ctl start`
/// is not used: Foundation's `Process` waits for a daemonizing child's inherited descriptors and
/// never returns.) One server per test
/// process, started on first use and stopped when the process exits; each test gets its own
/// database. Without the binaries the tests are skipped with a note, and fail under `CI=true`
/// (`.ci/run` installs `postgresql`).
package final class PostgresServer: Sendable {
    package let port: Int
    let directory: String
    let binaries: String
    let owner: String?
    private let child = Mutex<Process?>(nil)
    /// Whether commits wait for the WAL (see ``dedicated(durable:)``).
    let durable: Bool

    private static let shared = Mutex<Result<PostgresServer, PostgresServerUnavailable>?>(nil)
    private static let counter = Atomic<Int>(0)

    /// The running server, started if needed; nil (with a note, or a recorded issue in CI) when
    /// PostgreSQL is not installed.
    package static func running() -> PostgresServer? {
        let result = shared.withLock { state -> Result<PostgresServer, PostgresServerUnavailable> in
            if let state { return state }
            let started = Result { () throws(PostgresServerUnavailable) -> PostgresServer in try start() }
            state = started
            return started
        }
        switch result {
        case .success(let server): return server
        case .failure(let reason):
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("PostgreSQL tests need a server: \(reason.message)")
            } else {
                print("PostgreSQL tests skipped: \(reason.message)")
            }
            return nil
        }
    }

    /// A server of its own, for a test that stops it (``stop()``); nil (with a note, or a recorded
    /// issue in CI) when PostgreSQL is not installed.
    /// `durable`: commits reach the WAL before they return (`synchronous_commit=on`), so a killed
    /// postmaster loses no acknowledged transaction (the shared server trades that for speed).
    package static func dedicated(durable: Bool = false) -> PostgresServer? {
        do {
            return try start(durable: durable)
        } catch {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                Issue.record("PostgreSQL tests need a server: \(error.message)")
            } else {
                print("PostgreSQL tests skipped: \(error.message)")
            }
            return nil
        }
    }

    /// A new empty database on the server; its URL.
    package func createDatabase() throws -> String {
        let name = "lifeline_test_\(getpid())_\(Self.counter.wrappingAdd(1, ordering: .relaxed).oldValue)"
        try run(binaries + "/createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "lifeline", name])
        return "postgres://lifeline@127.0.0.1:\(port)/\(name)?sslmode=disable&pool=8"
    }

    /// Runs `sql` with `psql` on the database of `url` (one of ``createDatabase()``), stopping at
    /// the first error.
    package func execute(_ sql: String, url: String) throws {
        guard let name = URL(string: url)?.lastPathComponent, !name.isEmpty else {
            throw PostgresServerUnavailable(message: "no database name in \(url)")
        }
        try run(
            binaries + "/psql",
            [
                "-h", "127.0.0.1", "-p", "\(port)", "-U", "lifeline", "-d", name, "-v", "ON_ERROR_STOP=1", "-q", "-c",
                sql,
            ])
    }

    private init(port: Int, directory: String, binaries: String, owner: String?, durable: Bool = false) {
        self.durable = durable
        self.port = port
        self.directory = directory
        self.binaries = binaries
        self.owner = owner
    }

    private static func start(durable: Bool = false) throws(PostgresServerUnavailable) -> PostgresServer {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.sorted(by: { (Int($0) ?? 0) < (Int($1) ?? 0) }).last,
            FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\(version)/bin/initdb")
        else {
            throw PostgresServerUnavailable(message: "no /usr/lib/postgresql/*/bin/initdb (apt install postgresql)")
        }
        let binaries = "/usr/lib/postgresql/\(version)/bin"
        let directory = NSTemporaryDirectory() + "lifeline-pg-\(getpid())-\(UUID().uuidString.prefix(8))"
        let owner: String? = getuid() == 0 ? "postgres" : nil
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            if owner != nil {
                try Self.exec("/bin/chown", ["postgres:postgres", directory])
            }
            let server = PostgresServer(
                port: freePort(), directory: directory, binaries: binaries, owner: owner, durable: durable)
            try server.run(
                binaries + "/initdb",
                ["-D", directory + "/data", "-A", "trust", "-U", "lifeline", "-E", "UTF8", "--no-sync", "--no-locale"])
            Self.stopAtExit(server)
            try server.launch()
            return server
        } catch {
            throw PostgresServerUnavailable(message: "\(error)")
        }
    }

    /// Starts `postgres` on this server's data directory and port, as a child, and waits until it
    /// accepts connections.
    private func launch() throws {
        let arguments = [
            binaries + "/postgres", "-D", directory + "/data", "-p", "\(port)", "-k", directory, "-c",
            "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=\(durable ? "on" : "off")",
            "-c", "full_page_writes=off", "-c", "max_connections=200",
        ]
        let process = Process()
        if let owner {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", owner, "--"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: arguments[0])
            process.arguments = Array(arguments.dropFirst())
        }
        if !FileManager.default.fileExists(atPath: directory + "/log") {
            _ = FileManager.default.createFile(atPath: directory + "/log", contents: nil)
        }
        let log = FileHandle(forWritingAtPath: directory + "/log")
        _ = try? log?.seekToEnd()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log ?? FileHandle.nullDevice
        process.standardError = log ?? FileHandle.nullDevice
        try process.run()
        child.withLock { $0 = process }
        // Ready when pg_isready says so (the server refuses queries while it starts or recovers).
        for attempt in 0... {
            if (try? Self.exec(binaries + "/pg_isready", ["-q", "-h", "127.0.0.1", "-p", "\(port)"])) != nil { break }
            guard attempt < 300, process.isRunning else {
                let text = (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
                throw PostgresServerUnavailable(message: "postgres did not start: \(text.suffix(2_000))")
            }
            usleep(100_000)
        }
    }

    /// Takes the server down — a fast shutdown, or (`kill`) SIGKILL of the postmaster, as a crash
    /// would — keeps it down for `downFor` seconds, then starts it again on the same data and port.
    package func restart(kill: Bool, downFor seconds: Double) throws {
        if kill {
            let pidFile = (try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8)) ?? ""
            if let pid = pidFile.split(separator: "\n").first.flatMap({ Int32($0) }) { Foundation.kill(pid, SIGKILL) }
            // Backends leave once they see their postmaster gone; a new one refuses to start before.
            for _ in 0..<100 {
                let left = (try? Self.exec("/usr/bin/pgrep", ["-f", "postgres.*-p \(port)"])) != nil
                if !left { break }
                usleep(100_000)
            }
        } else {
            try run(binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "stop"])
        }
        child.withLock { process in
            process?.waitUntilExit()
            process = nil
        }
        usleep(useconds_t(seconds * 1_000_000))
        try launch()
    }

    /// Stops the server (immediate shutdown) and removes its directory.
    package func stop() {
        try? run(binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "stop"])
        child.withLock { process in
            if let process, process.isRunning { process.terminate() }
            process = nil
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static let toStop = Mutex<[PostgresServer]>([])

    private static func stopAtExit(_ server: PostgresServer) {
        let first = toStop.withLock { servers in
            servers.append(server)
            return servers.count == 1
        }
        guard first else { return }
        atexit {
            PostgresServer.toStop.withLock { servers in
                for server in servers { server.stop() }
                servers = []
            }
        }
    }

    /// Runs a PostgreSQL binary, as the server's owner when running as root.
    func run(_ executable: String, _ arguments: [String]) throws {
        if let owner {
            try Self.exec("/usr/sbin/runuser", ["-u", owner, "--", executable] + arguments)
        } else {
            try Self.exec(executable, arguments)
        }
    }

    private static func exec(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw PostgresServerUnavailable(
                message:
                    "\((executable as NSString).lastPathComponent) failed (\(process.terminationStatus)): \(message)")
        }
    }

    /// A port free on 127.0.0.1 now.
    private static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Why no PostgreSQL server could be started.
package struct PostgresServerUnavailable: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}
