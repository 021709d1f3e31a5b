import Foundation
import Hummingbird
import HummingbirdCore
import LifelineAlerts
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineStorage
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// Builds the Lifeline HTTP application over `backend`, whichever store it is: the rule file is
/// read, the routes wired, and the services registered in the order they must stop in reverse.
///
/// The backend's services (writer, pool, leader election) are registered before the HTTP server,
/// so on graceful shutdown the server stops first and finishes its in-flight requests while the
/// writer still commits them.
package func buildApplication(
    _ config: ServerConfig, backend: ServerBackend
) async throws -> Application<RouterResponder<LifelineRequestContext>> {
    let logger = config.logger
    let (router, evaluator, keys, metrics) = try await buildParts(config, backend: backend)
    var app = makeApplication(router, config)
    app.addServices(backend.services)
    // After the backend, so they stop before it on shutdown.
    app.addServices(evaluator)
    app.addServices(KeyUseRecorder(keys: keys, store: backend.keys, logger: logger))
    app.addServices(
        RetentionService(
            runner: backend.retention, enabled: config.retention != .keepForever, interval: config.pruneInterval,
            initialDelay: config.pruneInitialDelay, metrics: metrics, logger: logger))
    logger.info("database: \(backend.name)")
    return app
}

/// The router and what the services share with it, built over `backend`.
private func buildParts(
    _ config: ServerConfig, backend: ServerBackend
) async throws -> (Router<LifelineRequestContext>, AlertEvaluator, KeyCache, ServiceMetrics) {
    let metrics = ServiceMetrics()
    backend.health.batches.set { metrics.batch(requests: $0) }
    let rules = try await NIOThreadPool.singleton.runIfActive {
        try config.rulesPath.map(RuleFileLoader.load(path:)) ?? RuleSet()
    }
    let analysis = AnalysisRunner(
        source: backend.aggregates, conventions: config.conventions, handlerFlag: config.handlerFlag,
        limits: config.reads)
    // Every node loads the rules (GET /v1/rules answers everywhere); only the leader evaluates
    // and notifies, from the state in the store, so a takeover does not announce again.
    let evaluator = AlertEvaluator(
        analysis: analysis, store: backend.alertState, rules: rules, rulesPath: config.rulesPath,
        options: .init(
            reloadOnHangup: config.reloadRulesOnHangup && config.rulesPath != nil, leader: backend.leader),
        logger: config.logger)
    let keys = KeyCache(ttl: config.keyCacheTTL, store: backend.keys)
    let router = buildRouter(
        config, backend: backend, analysis: analysis, evaluator: evaluator, metrics: metrics, keys: keys)
    return (router, evaluator, keys, metrics)
}

/// Every route the application over `backend` answers, as `METHOD /path` (for the test that
/// proves both stores serve the same routes).
package func routeDescriptions(_ config: ServerConfig, backend: ServerBackend) async throws -> [String] {
    let (router, _, _, _) = try await buildParts(config, backend: backend)
    return router.routes.map { "\($0.method) \($0.path)" }.sorted()
}

/// The HTTP server of `router` with the configured address and bounds: a stalled request is cut
/// after `read_timeout` of silence, idle connections after `idle_timeout`; header sizes and
/// connections are capped.
func makeApplication(
    _ router: Router<LifelineRequestContext>, _ config: ServerConfig
) -> Application<RouterResponder<LifelineRequestContext>> {
    let silence = min(config.readTimeout, config.idleTimeout)
    var http = HTTP1Channel.Configuration(idleTimeout: TimeAmount(silence))
    http.httpDecoder.maxHeaderListSize = config.maxHeaderBytes
    http.httpDecoder.maxHeaderFieldSize = config.maxHeaderBytes
    return Application(
        router: router,
        server: .http1(configuration: http),
        configuration: .init(
            address: .hostname(config.host, port: config.port), serverName: "lifeline",
            availableConnectionsDelegate: MaximumAvailableConnections(config.maxConnections)),
        logger: config.logger
    )
}

/// The routes: the same on every store.
func buildRouter(
    _ config: ServerConfig, backend: ServerBackend, analysis: AnalysisRunner, evaluator: AlertEvaluator,
    metrics: ServiceMetrics, keys: KeyCache
) -> Router<LifelineRequestContext> {
    let router = Router(context: LifelineRequestContext.self)
    router.add(middleware: MetricsMiddleware(metrics: metrics))
    router.add(middleware: ErrorMiddleware())
    var governance = config.governance
    // Without a local database file, the database's disk is not this process's to guard.
    if backend.localDiskDirectory == nil { governance.minFreeDiskBytes = 0 }
    let health = backend.health
    let admission = IngestAdmission(
        limits: governance, trustedProxies: config.trustedProxies,
        databaseDirectory: backend.localDiskDirectory ?? ".",
        queuedDocuments: { health.writerStatistics.queuedDocuments },
        receivedSince: { app, since in try await health.receivedDocuments(app: app, since: since) })
    HealthController(health: health, admission: admission, leader: backend.leader).addRoutes(to: router)
    let v1 = router.group("v1").add(middleware: AuthMiddleware(keys: keys))
    IngestController(
        ingestor: Ingestor(
            pipeline: IngestPipeline(limits: config.limits, decodeLimits: config.decodeLimits),
            writer: backend.writer),
        admission: admission, readTimeout: config.readTimeout, metrics: metrics
    ).addRoutes(to: v1)
    QueryController(analysis: analysis, maxRows: config.maxRows).addRoutes(to: v1)
    ExplorerController(analysis: analysis, maxRows: config.maxRows).addRoutes(to: v1)
    SymbolsController(
        symbols: backend.symbols, source: backend.aggregates, archiveLimits: config.database.symbolArchive
    ).addRoutes(to: v1)
    DashboardController(
        sessions: backend.sessions, alerts: backend.alertState, analysis: analysis, keys: keys,
        sessionSeconds: config.sessionSeconds, secureCookies: config.secureCookies
    ).addRoutes(to: router)
    MetricsController(
        service: metrics, health: health, evaluator: evaluator, leader: backend.leader,
        product: ProductMetrics(
            analysis: analysis, windowDays: config.metricsWindowDays, versionsPerApp: config.metricsVersionsPerApp,
            lastDay: config.metricsLastDay),
        admission: admission
    ).addRoutes(to: router.group().add(middleware: AuthMiddleware(keys: keys)))
    let alerts = AlertsController(evaluator: evaluator)
    alerts.addRoutes(to: v1)  // GET /v1/alerts, GET /v1/rules (read key)
    alerts.addAdminRoutes(to: router.group("-").add(middleware: AuthMiddleware(keys: keys)))  // POST /-/reload
    return router
}
