import ArgumentParser
import Foundation
import Hummingbird
import LifelineBackends
import LifelineModel
import LifelinePostgres
import LifelineServer
import LifelineSQLite
import Logging
import ServiceLifecycle
import UnixSignals

/// `lifeline serve`: runs the HTTP service until SIGTERM/SIGINT, then finishes in-flight writes.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the HTTP service (ingest, query, alerts, health) on the database.",
        discussion: """
            Migrates the database on start. On SIGTERM or SIGINT the server stops accepting \
            connections, answers the requests in flight (their payloads are committed first), then exits.
            Flags win over the --config file, which wins over the defaults.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "Address to listen on (default 127.0.0.1; 0.0.0.0 for all interfaces).")
    var host: String?

    @Option(help: "TCP port (default 8080).")
    var port: Int?

    @Option(help: "YAML configuration file (server, database, limits, retention, analysis and alerts sections).")
    var config: String?

    @Option(help: "Alert rule file (YAML, see config/rules.example.yaml); reloaded on SIGHUP and POST /-/reload.")
    var rules: String?

    @Option(
        help: "SQLite synchronous mode: full (default; an ack survives power loss) or normal (survives process crash).")
    var synchronous: SynchronousMode?

    func validate() throws {
        if let port, !(0...65535).contains(port) {
            throw ValidationError("--port must be between 0 and 65535")
        }
    }

    func run() async throws {
        let file = try config.map(ConfigFile.load)
        var server = ServerConfig()
        server.logger = global.makeLogger()
        server.host = host ?? file?.server?.host ?? server.host
        server.port = port ?? file?.server?.port ?? server.port
        server.databasePath = global.db
        if global.db == GlobalOptions.defaultDatabasePath, let path = file?.database?.path {
            server.databasePath = path
        }
        if global.isPostgres {
            server.databaseURL = global.db
        } else if global.db == GlobalOptions.defaultDatabasePath, let url = file?.database?.url {
            guard PostgresLocation.isURL(url) else {
                throw CommandError("database.url must be a postgres:// or postgresql:// URL")
            }
            server.databaseURL = url
        }
        MallocArenas.apply(postgres: server.databaseURL != nil)
        if let seconds = file?.server?.keyCacheSeconds { server.keyCacheTTL = .seconds(seconds) }
        if let secure = file?.server?.secureCookies { server.secureCookies = secure }
        if let hours = file?.server?.sessionHours { server.sessionSeconds = Int64(hours) * 3_600 }
        if let limits = file?.limits { server.limits = limits }
        if let governance = file?.governance { server.governance = governance }
        if let proxies = file?.server?.trustedProxies { server.trustedProxies = proxies }
        if let seconds = file?.server?.readTimeoutSeconds { server.readTimeout = .seconds(seconds) }
        if let seconds = file?.server?.idleTimeoutSeconds { server.idleTimeout = .seconds(seconds) }
        if let bytes = file?.server?.maxHeaderBytes { server.maxHeaderBytes = bytes }
        if let connections = file?.server?.maxConnections { server.maxConnections = connections }
        if let seconds = file?.server?.shutdownGraceSeconds { server.shutdownGrace = .seconds(seconds) }
        if let retention = file?.retention { server.retention = retention }
        if let minutes = file?.retentionSchedule?.pruneIntervalMinutes { server.pruneInterval = .seconds(minutes * 60) }
        if let conventions = file?.analysis?.conventions { server.conventions = conventions }
        if let flag = file?.analysis?.handlerFlag { server.handlerFlag = flag }
        if let days = file?.metrics?.windowDays { server.metricsWindowDays = days }
        if let versions = file?.metrics?.versionsPerApp { server.metricsVersionsPerApp = versions }
        server.metricsLastDay = file?.metrics?.lastDay.flatMap { UTCDay($0) }
        server.rulesPath = rules ?? file?.alerts?.rulesFile
        file?.query?.apply(to: &server)
        if let file { server.database = file.databaseOptions(server.database) }
        if let mode = try synchronous ?? file?.database?.synchronous.map(SynchronousMode.parse) {
            server.database.synchronous = mode.store
        }
        server.logger.info(
            "starting lifeline",
            metadata: [
                "db":
                    "\(server.databaseURL.map { (try? PostgresLocation($0).description) ?? "postgres" } ?? server.databasePath)",
                "address": "\(server.host):\(server.port)",
            ])
        let app = try await buildApplication(server)
        // Stopping is bounded: graceful shutdown for `shutdown_grace_seconds`, then cancellation,
        // then (ShutdownDeadline) exit, whatever a lost database does to the services.
        var group = ServiceGroupConfiguration(
            services: [
                .init(service: app),
                .init(service: ShutdownDeadline(grace: server.shutdownGrace, logger: server.logger)),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: server.logger)
        group.maximumGracefulShutdownDuration = server.shutdownGrace
        try await ServiceGroup(configuration: group).run()
    }
}

/// `--synchronous` values.
enum SynchronousMode: String, ExpressibleByArgument, CaseIterable {
    case full
    case normal

    var store: Database.Synchronous {
        switch self {
        case .full: .full
        case .normal: .normal
        }
    }

    static func parse(_ text: String) throws -> SynchronousMode {
        guard let mode = SynchronousMode(rawValue: text.lowercased()) else {
            throw CommandError("database.synchronous must be full or normal, not \"\(text)\"")
        }
        return mode
    }
}

/// The last word on stopping: when graceful shutdown begins (this service is told first), a
/// dedicated thread waits the grace period plus 5 s of cancellation, then exits the process with
/// status 1 and a log line. A clean stop ends the process before it fires.
struct ShutdownDeadline: Service {
    let grace: Duration
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        let limit = grace + .seconds(5)
        let logger = self.logger
        let thread = Thread {
            Thread.sleep(forTimeInterval: Double(limit.components.seconds))
            logger.error(
                "shutdown did not finish within \(limit) (server.shutdown_grace_seconds + 5 s); exiting anyway")
            exit(1)
        }
        thread.name = "lifeline-shutdown-deadline"
        thread.start()
    }
}
