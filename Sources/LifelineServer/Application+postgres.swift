import Foundation
import Hummingbird
import HummingbirdCore
import LifelineAlerts
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelinePostgres
import LifelineStore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// `lifeline serve --db postgres://…`: a stateless node. Everything shared lives in PostgreSQL
/// (documents, rollups, idempotency, keys); in this process only caches (keys, for
/// `server.key_cache_seconds`) and per-node rate limits. One node, elected by an advisory lock,
/// runs the singletons (alert evaluation and delivery, retention of raw partitions); `/readyz`
/// and `/metrics` tell which.
func buildPostgresApplication(
    _ config: ServerConfig, url: String
) async throws -> Application<RouterResponder<LifelineRequestContext>> {
    let logger = config.logger
    let metrics = ServiceMetrics()
    let store = try PostgresStore(
        url: url, logger: logger, symbolCache: config.database.symbolDirectory.map { URL(fileURLWithPath: $0) },
        symbolicator: Symbolicator(executable: config.database.llvmSymbolizer))
    do {
        let applied = try await store.migrate()
        if !applied.isEmpty {
            logger.info("applied migrations", metadata: ["migrations": "\(applied.map(\.identifier))"])
        }
    } catch {
        await store.shutdown()
        throw error
    }
    logger.info("database: PostgreSQL \(store.location)")
    if let symbolicator = store.symbolicator {
        logger.info(
            "symbolication on",
            metadata: ["llvm_symbolizer": "\(symbolicator.executable)", "symbol_cache": "\(store.symbolCache.path)"])
    } else {
        logger.warning(
            "symbolication off: no llvm-symbolizer on PATH (install llvm, or set symbols.llvm_symbolizer); crash frames stay binary + offset"
        )
    }
    let election = try LeaderElection(location: store.location, logger: logger)
    let leader: @Sendable () -> Bool = { election.isLeader }
    let rules: RuleSet
    do {
        rules = try await NIOThreadPool.singleton.runIfActive {
            try config.rulesPath.map(RuleFileLoader.load(path:)) ?? RuleSet()
        }
    } catch {
        await store.shutdown()
        throw error
    }
    let analysis = AnalysisRunner(source: store, conventions: config.conventions, handlerFlag: config.handlerFlag)
    // Every node loads the rules (GET /v1/rules answers everywhere); only the leader evaluates
    // and notifies, from the state in the database, so a takeover does not announce again.
    let evaluator = AlertEvaluator(
        analysis: analysis, store: store, rules: rules, rulesPath: config.rulesPath,
        options: .init(reloadOnHangup: config.reloadRulesOnHangup && config.rulesPath != nil, leader: leader),
        logger: logger)

    let router = Router(context: LifelineRequestContext.self)
    router.add(middleware: MetricsMiddleware(metrics: metrics))
    router.add(middleware: ErrorMiddleware())
    // The database's disk is not this node's: the free-disk guard is PostgreSQL's business here.
    var governance = config.governance
    governance.minFreeDiskBytes = 0
    let admission = IngestAdmission(
        limits: governance, trustedProxies: config.trustedProxies, databaseDirectory: ".",
        queuedDocuments: { 0 },
        receivedSince: { app, since in try await store.documentsReceived(app: app, since: since) })
    HealthController(
        ping: { try await store.ping() }, accepting: { true }, admission: admission, leader: leader
    ).addRoutes(to: router)
    let keys = KeyCache(ttl: config.keyCacheTTL) { token in try await store.verify(token: token) }
    let v1 = router.group("v1").add(middleware: AuthMiddleware(keys: keys))
    IngestController(
        ingestor: Ingestor(
            pipeline: IngestPipeline(limits: config.limits, decodeLimits: config.decodeLimits), writer: store),
        admission: admission, readTimeout: config.readTimeout, metrics: metrics
    ).addRoutes(to: v1)
    QueryController(analysis: analysis).addRoutes(to: v1)
    SymbolsController(symbols: store, source: store).addRoutes(to: v1)
    DashboardController(
        sessions: store, alerts: store, analysis: analysis, keys: keys, sessionSeconds: config.sessionSeconds,
        secureCookies: config.secureCookies
    ).addRoutes(to: router)
    let alerts = AlertsController(evaluator: evaluator)
    alerts.addRoutes(to: v1)  // GET /v1/alerts, GET /v1/rules (read key)
    alerts.addAdminRoutes(to: router.group("-").add(middleware: AuthMiddleware(keys: keys)))  // POST /-/reload
    var metricsController = MetricsController(
        service: metrics, writer: nil, evaluator: evaluator,
        product: ProductMetrics(
            analysis: analysis, windowDays: config.metricsWindowDays, versionsPerApp: config.metricsVersionsPerApp,
            lastDay: config.metricsLastDay),
        admission: admission)
    metricsController.leader = leader
    metricsController.addRoutes(to: router.group().add(middleware: AuthMiddleware(keys: keys)))

    var app = makeApplication(router, config)
    // First registered, last stopped: the pool closes after the server finished its requests.
    app.addServices(PostgresPoolService(store: store))
    app.addServices(LeaderService(election: election))
    app.addServices(evaluator)
    app.addServices(KeyUseRecorder(keys: keys, logger: logger) { uses in try await store.recordKeyUse(uses) })
    app.addServices(
        PostgresRetentionService(
            store: store, policy: config.retention, interval: config.pruneInterval,
            initialDelay: config.pruneInitialDelay, leader: leader, logger: logger))
    return app
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
struct LeaderService: Service {
    let election: LeaderElection

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await election.run()
        }
    }
}

/// On the leader only: applies the retention policy (``PostgresStore/prune(policy:now:dryRun:batchSize:progress:)``:
/// raw partitions dropped whole, old payloads, rollup rows, idempotency records and alert
/// history deleted) every `interval`.
struct PostgresRetentionService: Service {
    let store: PostgresStore
    let policy: RetentionPolicy
    let interval: Duration
    let initialDelay: Duration
    let leader: @Sendable () -> Bool
    let logger: Logger

    func run() async throws {
        guard policy != .keepForever else {
            // Nothing to do, but a service that returns would stop the application.
            try? await gracefulShutdown()
            return
        }
        try? await cancelWhenGracefulShutdown {
            try await Task.sleep(for: initialDelay)
            while !Task.isCancelled {
                if leader() {
                    do {
                        let report = try await store.prune(policy: policy)
                        logger.info("retention: \(report.summary)")
                    } catch {
                        logger.warning("retention on PostgreSQL failed", metadata: ["error": "\(error)"])
                    }
                }
                try await Task.sleep(for: interval)
            }
        }
    }
}
