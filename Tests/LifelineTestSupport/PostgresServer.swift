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
    package static func dedicated() -> PostgresServer? {
        do {
            return try start()
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

    private init(port: Int, directory: String, binaries: String, owner: String?) {
        self.port = port
        self.directory = directory
        self.binaries = binaries
        self.owner = owner
    }

    private static func start() throws(PostgresServerUnavailable) -> PostgresServer {
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
            let server = PostgresServer(port: freePort(), directory: directory, binaries: binaries, owner: owner)
            try server.run(
                binaries + "/initdb",
                ["-D", directory + "/data", "-A", "trust", "-U", "lifeline", "-E", "UTF8", "--no-sync", "--no-locale"])
            let arguments = [
                binaries + "/postgres", "-D", directory + "/data", "-p", "\(server.port)", "-k", directory, "-c",
                "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c",
                "full_page_writes=off", "-c", "max_connections=200",
            ]
            let process = Process()
            if let owner {
                process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
                process.arguments = ["-u", owner, "--"] + arguments
            } else {
                process.executableURL = URL(fileURLWithPath: arguments[0])
                process.arguments = Array(arguments.dropFirst())
            }
            _ = FileManager.default.createFile(atPath: directory + "/log", contents: nil)
            let log = FileHandle(forWritingAtPath: directory + "/log")
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = log ?? FileHandle.nullDevice
            process.standardError = log ?? FileHandle.nullDevice
            try process.run()
            server.child.withLock { $0 = process }
            Self.stopAtExit(server)
            // Ready when pg_isready says so (the server refuses queries while it starts).
            for attempt in 0... {
                if (try? Self.exec(binaries + "/pg_isready", ["-q", "-h", "127.0.0.1", "-p", "\(server.port)"])) != nil
                {
                    break
                }
                guard attempt < 300, process.isRunning else {
                    let text = (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
                    throw PostgresServerUnavailable(message: "postgres did not start: \(text.suffix(2_000))")
                }
                usleep(100_000)
            }
            return server
        } catch {
            throw PostgresServerUnavailable(message: "\(error)")
        }
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
