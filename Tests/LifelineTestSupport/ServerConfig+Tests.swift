import LifelineIngest
import LifelineServer
import LifelineSQLite
import LifelineStorage
@_exported import LifelineStoreTestSupport

extension TemporaryDatabase {
    /// A server configuration on this database, on a free port, without logs, rate limits and retention off.
    package func config(options: Database.Options = .init(), limits: IngestLimits = .init()) -> ServerConfig {
        var config = ServerConfig.forTests(limits: limits)
        config.databasePath = path
        config.database = options
        return config
    }
}

extension ServerConfig {
    /// A configuration for a test server: a free port, no logs, `limits`; rate limits off (every
    /// test client is 127.0.0.1) and retention off (tests load fixtures of past years) unless a
    /// test sets them.
    package static func forTests(limits: IngestLimits = .init()) -> ServerConfig {
        var config = ServerConfig()
        config.port = 0
        config.limits = limits
        config.governance.ingestRatePerKey = 0
        config.governance.ingestRatePerIP = 0
        config.retention = .keepForever
        // A loaded CI machine runs the whole suite at once: the outage tests set their own bound.
        config.database.timeoutSeconds = 30
        // The same for reads: a /metrics scrape or an insights answer that takes 0.5 s alone took
        // over the 10 s default there. The bounded-reads tests set their own.
        config.reads.timeout = .seconds(60)
        config.reads.queueWait = .seconds(30)
        config.logger = .quiet
        return config
    }
}
