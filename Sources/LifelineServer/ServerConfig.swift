import LifelineAnalysis
import LifelineIngest
import LifelineModel
import LifelineStorage
import Logging

/// Everything `lifeline serve` needs; read from flags and the optional YAML config file.
package struct ServerConfig: Sendable {
    package var host = "127.0.0.1"
    package var port = 8080
    package var databasePath = "./lifeline.sqlite"
    /// `postgres://…`: run on PostgreSQL instead of the SQLite file (``databasePath`` unused).
    package var databaseURL: String?
    package var database = StorageOptions()
    package var limits = IngestLimits()
    package var decodeLimits = DecodeLimits()
    /// Rate limits, backpressure, quota and the free-space guard (`limits:`).
    package var governance = GovernanceLimits()
    /// Proxies whose `X-Forwarded-For` is believed (`server.trusted_proxies`, exact addresses).
    package var trustedProxies: [String] = []
    /// A request's headers, and its body, must arrive within this (`server.read_timeout_seconds`). Default 30 s.
    package var readTimeout: Duration = .seconds(30)
    /// Idle keep-alive connections close after this (`server.idle_timeout_seconds`). Default 60 s.
    package var idleTimeout: Duration = .seconds(60)
    /// Largest request head (request line and headers, `server.max_header_bytes`). Default 16 KiB.
    package var maxHeaderBytes = 16 << 10
    /// Connections open at once; more wait in the listen backlog (`server.max_connections`). Default 1,024.
    package var maxConnections = 1_024
    /// On SIGTERM or SIGINT: time to finish in-flight requests and stop the services
    /// (`server.shutdown_grace_seconds`). Default 10 s. Past it the services are cancelled, and
    /// 5 s later the process exits (status 1) whatever the database does.
    package var shutdownGrace: Duration = .seconds(10)
    /// What is kept how long (`retention:`); pruned by a service every ``pruneInterval``.
    package var retention = RetentionPolicy()
    /// Time between two pruning runs (`retention.prune_interval_minutes`). Default 1 h.
    package var pruneInterval: Duration = .seconds(3_600)
    /// Time from start to the first pruning run. Default 30 s.
    package var pruneInitialDelay: Duration = .seconds(30)
    /// How long a verified API key is trusted before the store is asked again.
    package var keyCacheTTL: Duration = .seconds(5)
    /// Dashboard: mark the session cookie `Secure` even when the request did not say it came over
    /// TLS (`server.secure_cookies`; set it when a TLS proxy in front strips `X-Forwarded-Proto`).
    package var secureCookies = false
    /// Dashboard: how long a session lasts after sign-in, seconds (`server.session_hours`). Default 12 h.
    package var sessionSeconds: Int64 = 12 * 3_600
    /// Bounds on every figure read (`query:`): source rows, time, reads at once (README, "Bounded reads").
    package var reads = ReadLimits()
    /// Rows per answer of the row-list endpoints at most (`query.max_rows`, default 10,000); longer
    /// answers say `truncated` and are paged with `limit` and `cursor`.
    package var maxRows = 10_000
    /// How signpost names map to expiration handlers and state restoration.
    package var conventions = SignpostConventions()
    /// When an expiration handler is flagged.
    package var handlerFlag = HandlerFlagRule()
    /// `/metrics`: the trailing window (UTC days, ending today) of the per-app figures.
    package var metricsWindowDays = 7
    /// `/metrics`: versions per app with their own label; the others are folded into `version="other"`.
    package var metricsVersionsPerApp = 10
    /// `/metrics`: the last day of the window (`YYYY-MM-DD`); `nil` for today (UTC). For tests and demos of old data.
    package var metricsLastDay: UTCDay?
    /// The alert rule file (`serve --rules FILE` / `alerts.rules_file`); `nil`: no rules (endpoints answer empty).
    package var rulesPath: String?
    /// Reload the rule file on SIGHUP.
    package var reloadRulesOnHangup = true
    package var logger = Logger(label: "lifeline")

    package init() {}
}
