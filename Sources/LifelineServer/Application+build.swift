import Foundation
import Hummingbird
import HummingbirdCore
import LifelineAlerts
import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineStore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// Builds the Lifeline HTTP application: opens (and migrates) the database, starts the
/// group-commit writer as a service, and wires the routes.
///
/// The writer is registered before the HTTP server, so on graceful shutdown the server stops
/// first and finishes its in-flight requests while the writer still commits them.
package func buildApplication(_ config: ServerConfig) async throws -> some ApplicationProtocol {
    if let url = config.databaseURL { return try await buildPostgresApplication(config, url: url) }
    let logger = config.logger
    let metrics = ServiceMetrics()
    // Opening files, migrating and reading the rules block: on NIO's blocking pool.
    let (database, writer, rules) = try await NIOThreadPool.singleton.runIfActive {
        let database = try Database(path: config.databasePath, options: config.database)
        let applied = try database.migrate()
        if !applied.isEmpty {
            logger.info("applied migrations", metadata: ["migrations": "\(applied.map(\.name))"])
        }
        if let symbolicator = database.symbolicator {
            logger.info(
                "symbolication on",
                metadata: [
                    "llvm_symbolizer": "\(symbolicator.executable)", "symbols": "\(database.symbolDirectory.path)",
                ])
        } else {
            logger.warning(
                "symbolication off: no llvm-symbolizer on PATH (install llvm, or set symbols.llvm_symbolizer); crash frames stay binary + offset"
            )
        }
        let writer = try IngestWriter(database: database, logger: logger) { metrics.batch(requests: $0) }
        let rules = try config.rulesPath.map(RuleFileLoader.load(path:)) ?? RuleSet()
        return (database, writer, rules)
    }
    let evaluator = AlertEvaluator(
        analysis: AnalysisRunner(source: database, conventions: config.conventions, handlerFlag: config.handlerFlag),
        store: database.alertState, rules: rules, rulesPath: config.rulesPath,
        options: .init(reloadOnHangup: config.reloadRulesOnHangup && config.rulesPath != nil),
        logger: logger)
    let keys = KeyCache(ttl: config.keyCacheTTL, database: database)
    let router = buildRouter(
        config, database: database, writer: writer, evaluator: evaluator, metrics: metrics, keys: keys)
    var app = makeApplication(router, config)
    app.addServices(writer)
    // After the writer, so it stops before it on shutdown.
    app.addServices(evaluator)
    app.addServices(KeyUseRecorder(keys: keys, database: database, logger: logger))
    app.addServices(
        RetentionService(
            pruner: Pruner(
                database: database, policy: config.retention,
                // Freed pages beyond a tenth of the file go back to the file system; the rest is
                // reused by the next days' inserts.
                options: .init(keepFreeFraction: 0.1)),
            interval: config.pruneInterval, initialDelay: config.pruneInitialDelay, metrics: metrics, logger: logger))
    return app
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

/// The routes, separated from the application so tests can also drive them in-process.
func buildRouter(
    _ config: ServerConfig, database: Database, writer: IngestWriter, evaluator: AlertEvaluator? = nil,
    metrics: ServiceMetrics = ServiceMetrics(), keys: KeyCache? = nil
) -> Router<LifelineRequestContext> {
    let router = Router(context: LifelineRequestContext.self)
    router.add(middleware: MetricsMiddleware(metrics: metrics))
    router.add(middleware: ErrorMiddleware())
    let admission = IngestAdmission(
        limits: config.governance, trustedProxies: config.trustedProxies,
        databaseDirectory: URL(fileURLWithPath: config.databasePath).deletingLastPathComponent().path,
        queuedDocuments: { writer.statistics.queuedDocuments },
        receivedSince: { app, since in
            try await database.write { try $0.documentsReceived(app: app, since: since) }
        })
    HealthController(database: database, writer: writer, admission: admission).addRoutes(to: router)
    let keys =
        keys ?? KeyCache(ttl: config.keyCacheTTL, database: database)
    let v1 = router.group("v1").add(middleware: AuthMiddleware(keys: keys))
    IngestController(
        ingestor: Ingestor(
            pipeline: IngestPipeline(limits: config.limits, decodeLimits: config.decodeLimits), writer: writer),
        admission: admission, readTimeout: config.readTimeout, metrics: metrics
    ).addRoutes(to: v1)
    let analysis = AnalysisRunner(source: database, conventions: config.conventions, handlerFlag: config.handlerFlag)
    QueryController(analysis: analysis).addRoutes(to: v1)
    SymbolsController(symbols: database.symbolStore, source: database).addRoutes(to: v1)
    DashboardController(
        sessions: SQLiteDashboardSessions(database: database), alerts: database.alertState, analysis: analysis,
        keys: keys, sessionSeconds: config.sessionSeconds,
        secureCookies: config.secureCookies
    ).addRoutes(to: router)
    MetricsController(
        service: metrics, writer: writer, evaluator: evaluator,
        product: ProductMetrics(
            analysis: analysis, windowDays: config.metricsWindowDays, versionsPerApp: config.metricsVersionsPerApp,
            lastDay: config.metricsLastDay),
        admission: admission
    ).addRoutes(to: router.group().add(middleware: AuthMiddleware(keys: keys)))
    if let evaluator {
        let alerts = AlertsController(evaluator: evaluator)
        alerts.addRoutes(to: v1)  // GET /v1/alerts, GET /v1/rules (read key)
        alerts.addAdminRoutes(to: router.group("-").add(middleware: AuthMiddleware(keys: keys)))  // POST /-/reload
    }
    return router
}
