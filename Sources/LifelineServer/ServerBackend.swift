import LifelineAlertState
import LifelineAnalysis
import LifelineIngest
import LifelineStorage
import ServiceLifecycle

/// Everything the server needs of a store, whichever it is. The composition root
/// (`LifelineBackends`) builds it from the configuration; ``buildApplication(_:backend:)`` builds
/// one router from it, so routes, metrics, services and logs are the same on every store.
package struct ServerBackend: Sendable {
    /// The engine's name for logs: `sqlite` or `postgresql`.
    package var name: String
    /// Where ingest writes (durable, deduplicated, idempotent).
    package var writer: any DocumentWriter
    /// Where figures are read.
    package var aggregates: any AggregateSource
    /// Where the alert evaluator keeps its state, history and outbox.
    package var alertState: any AlertStateStore
    /// API keys.
    package var keys: any KeyStore
    /// Dashboard sessions.
    package var sessions: any SessionStore
    /// Debug symbols.
    package var symbols: any SymbolStore
    /// `/readyz`, the writer's gauges and the ingest quota.
    package var health: any StoreHealth
    /// One retention run (the retention service calls it every interval).
    package var retention: any RetentionRunner
    /// Whether this process runs the singletons (alert evaluation and delivery, retention): always
    /// on SQLite, the advisory-lock holder on PostgreSQL.
    package var leader: @Sendable () -> Bool
    /// The directory whose file system the free-disk guard watches; nil when the database's disk
    /// is not this process's (PostgreSQL).
    package var localDiskDirectory: String?
    /// The store's own long-running work (writer, pool, leader election), started before the HTTP
    /// server and stopped after it, in this order.
    package var services: [any Service]
    /// Releases what opening the store took (connections, threads) when the application is never
    /// run; a running application releases them through ``services`` on shutdown.
    package var close: @Sendable () async -> Void

    package init(
        name: String, writer: any DocumentWriter, aggregates: any AggregateSource, alertState: any AlertStateStore,
        keys: any KeyStore, sessions: any SessionStore, symbols: any SymbolStore, health: any StoreHealth,
        retention: any RetentionRunner, leader: @escaping @Sendable () -> Bool, localDiskDirectory: String?,
        services: [any Service], close: @escaping @Sendable () async -> Void
    ) {
        self.name = name
        self.writer = writer
        self.aggregates = aggregates
        self.alertState = alertState
        self.keys = keys
        self.sessions = sessions
        self.symbols = symbols
        self.health = health
        self.retention = retention
        self.leader = leader
        self.localDiskDirectory = localDiskDirectory
        self.services = services
        self.close = close
    }
}
