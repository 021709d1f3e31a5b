import Foundation
import Hummingbird
import LifelineAlerts
import LifelinePostgres
import LifelineSQLite
import LifelineServer
import LifelineStorage
import Logging
import NIOPosix
import ServiceLifecycle

/// The composition root of `lifeline serve`: opens the store the configuration names (the SQLite
/// file, or PostgreSQL for a `postgres://` URL) as a ``ServerBackend`` and builds the one
/// application over it. The only module that knows both engines.
package enum Backends {
    /// Opens (and migrates) the store of `config`.
    package static func open(_ config: ServerConfig) async throws -> ServerBackend {
        if let url = config.databaseURL { return try await postgres(config, url: url) }
        return try await sqlite(config)
    }

    /// The SQLite file of `config.databasePath`: one writer (group commit) as a service.
    static func sqlite(_ config: ServerConfig) async throws -> ServerBackend {
        let logger = config.logger
        // Opening files and migrating block: on NIO's blocking pool.
        let (database, writer) = try await NIOThreadPool.singleton.runIfActive {
            let database = try Database(path: config.databasePath, options: config.database)
            let applied = try database.migrate()
            if !applied.isEmpty {
                logger.info("applied migrations", metadata: ["migrations": "\(applied.map(\.name))"])
            }
            let writer = try IngestWriter(database: database, logger: logger)
            return (database, writer)
        }
        logSymbolication(database.symbolicator, place: database.symbolDirectory, logger: logger)
        return ServerBackend(
            name: "SQLite \(config.databasePath)", writer: writer, aggregates: database,
            alertState: database.alertState,
            keys: database, sessions: database, symbols: database.symbolStore,
            health: SQLiteHealth(database: database, writer: writer),
            retention: Pruner(
                database: database, policy: config.retention,
                // Freed pages beyond a tenth of the file go back to the file system; the rest is
                // reused by the next days' inserts.
                options: .init(keepFreeFraction: 0.1)),
            leader: { true },
            localDiskDirectory: URL(fileURLWithPath: config.databasePath).deletingLastPathComponent().path,
            // First registered, last stopped: the checkpoint runs once the writer has stopped.
            services: [SQLiteCheckpointOnExit(database: database, logger: logger), writer],
            close: {
                await writer.shutdown()
                database.checkpointForExit()
            })
    }

    /// A stateless node on PostgreSQL: everything shared lives in the database; one node, elected
    /// by an advisory lock, runs the singletons (alert evaluation and delivery, retention).
    static func postgres(_ config: ServerConfig, url: String) async throws -> ServerBackend {
        let logger = config.logger
        let store = try PostgresStore(
            url: url, logger: logger, symbolCache: config.database.symbolDirectory.map { URL(fileURLWithPath: $0) },
            symbolicator: config.database.makeSymbolicator(), timeout: config.database.timeout)
        let election: LeaderElection
        do {
            let applied = try await store.migrate()
            if !applied.isEmpty {
                logger.info("applied migrations", metadata: ["migrations": "\(applied.map(\.identifier))"])
            }
            election = try LeaderElection(location: store.location, logger: logger)
        } catch {
            await store.shutdown()
            throw error
        }
        logSymbolication(store.symbolicator, place: store.symbolCache, logger: logger)
        let leader: @Sendable () -> Bool = { election.isLeader }
        return ServerBackend(
            name: "PostgreSQL \(store.location)", writer: store, aggregates: store, alertState: store, keys: store,
            sessions: store, symbols: store, health: store,
            retention: PostgresRetention(store: store, policy: config.retention, leader: leader),
            leader: leader, localDiskDirectory: nil,
            // First registered, last stopped: the pool closes after the server finished its requests.
            services: [
                PostgresPoolService(store: store), LeaderService(election: election),
                AggregatorService(store: store, leader: leader),
            ],
            close: { await store.shutdown() })
    }

    private static func logSymbolication(_ symbolicator: Symbolicator?, place: URL, logger: Logger) {
        if let symbolicator {
            logger.info(
                "symbolication on",
                metadata: ["llvm_symbolizer": "\(symbolicator.executable)", "symbols": "\(place.path)"])
        } else {
            logger.warning(
                "symbolication off: no llvm-symbolizer on PATH (install llvm, or set symbols.llvm_symbolizer); crash frames stay binary + offset"
            )
        }
    }
}

/// `lifeline serve`: the store of `config` and the application over it.
package func buildApplication(_ config: ServerConfig) async throws -> some ApplicationProtocol {
    let backend = try await Backends.open(config)
    do {
        return try await buildApplication(config, backend: backend)
    } catch {
        await backend.close()
        throw error
    }
}

/// On shutdown, after every other service stopped: moves the write-ahead log into the database
/// file, so the `.sqlite` file alone is complete once the server has exited.
struct SQLiteCheckpointOnExit: Service {
    let database: Database
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        let database = self.database
        let complete = try await NIOThreadPool.singleton.runIfActive { database.checkpointForExit() }
        if !complete { logger.warning("shutdown: the write-ahead log could not be checkpointed (a reader held it)") }
    }
}

/// Keeps the connection pool open until shutdown.
struct PostgresPoolService: Service {
    let store: PostgresStore

    func run() async throws {
        try? await gracefulShutdown()
        await store.shutdown()
    }
}

/// Campaigns for leadership until shutdown (then the lock goes with the connection).
/// The aggregator stage: the leader folds what the nodes appended; every node follows the lag.
struct AggregatorService: Service {
    let store: PostgresStore
    let leader: @Sendable () -> Bool

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await store.runAggregator(isLeader: leader)
        }
    }
}

struct LeaderService: Service {
    let election: LeaderElection

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await election.run()
        }
    }
}
