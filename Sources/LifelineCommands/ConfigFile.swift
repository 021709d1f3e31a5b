import Foundation
import LifelineIngest
import LifelineAnalysis
import LifelineModel
import LifelineServer
import LifelineSQLite
import LifelineStorage
import Yams

/// The YAML configuration file of `lifeline serve --config FILE`. Every key is optional; flags win
/// over the file, the file over the defaults. See `config/lifeline.example.yaml`.
struct ConfigFile: Decodable {
    struct Server: Decodable {
        var host: String?
        var port: Int?
        var keyCacheSeconds: Int?
        var secureCookies: Bool?
        var sessionHours: Int?
        var trustedProxies: [String]?
        var readTimeoutSeconds: Int?
        var idleTimeoutSeconds: Int?
        var maxHeaderBytes: Int?
        var maxConnections: Int?
        var shutdownGraceSeconds: Int?

        enum CodingKeys: String, CodingKey {
            case host, port
            case keyCacheSeconds = "key_cache_seconds"
            case secureCookies = "secure_cookies"
            case sessionHours = "session_hours"
            case trustedProxies = "trusted_proxies"
            case readTimeoutSeconds = "read_timeout_seconds"
            case idleTimeoutSeconds = "idle_timeout_seconds"
            case maxHeaderBytes = "max_header_bytes"
            case maxConnections = "max_connections"
            case shutdownGraceSeconds = "shutdown_grace_seconds"
        }
    }

    struct DatabaseSection: Decodable {
        var path: String?
        /// `postgres://…`: PostgreSQL instead of the SQLite file.
        var url: String?
        var synchronous: String?
        /// `timeout_seconds`: the longest a request waits on the database.
        var timeoutSeconds: Int?
        /// `explorer_write_seconds`: how long the SQLite writer holds the explorer's rows (0…60).
        var explorerWriteSeconds: Double?
        /// `explorer_version_rows`: the explorer's version rows the SQLite writer holds unsealed
        /// (0…1,000,000, default 24,576; 0 seals them with the fine rows).
        var explorerVersionRows: Int?
        /// `explorer_version_seconds`: how often the SQLite writer writes each held version row (0…60,
        /// default 4).
        var explorerVersionSeconds: Double?
        /// `raw_compaction`: whether the SQLite server re-deflates raw copies against a preset
        /// dictionary behind the fold (default true).
        var rawCompaction: Bool?

        enum CodingKeys: String, CodingKey {
            case path, url, synchronous
            case timeoutSeconds = "timeout_seconds"
            case explorerWriteSeconds = "explorer_write_seconds"
            case explorerVersionRows = "explorer_version_rows"
            case explorerVersionSeconds = "explorer_version_seconds"
            case rawCompaction = "raw_compaction"
        }
    }

    enum CodingKeys: String, CodingKey {
        case server, database, limits, analysis, alerts, metrics, retention, symbols, query
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        server = try c.decodeIfPresent(Server.self, forKey: .server)
        database = try c.decodeIfPresent(DatabaseSection.self, forKey: .database)
        limits = try c.decodeIfPresent(IngestLimits.self, forKey: .limits)
        governance = try c.decodeIfPresent(GovernanceLimits.self, forKey: .limits)
        analysis = try c.decodeIfPresent(Analysis.self, forKey: .analysis)
        alerts = try c.decodeIfPresent(Alerts.self, forKey: .alerts)
        metrics = try c.decodeIfPresent(Metrics.self, forKey: .metrics)
        retention = try c.decodeIfPresent(RetentionPolicy.self, forKey: .retention)
        retentionSchedule = try c.decodeIfPresent(RetentionSchedule.self, forKey: .retention)
        symbols = try c.decodeIfPresent(Symbols.self, forKey: .symbols)
        query = try c.decodeIfPresent(Query.self, forKey: .query)
    }

    /// `query:` — the bounds of every read (``Query``).
    var query: Query?

    /// `symbols:` — where debug symbol files live, which `llvm-symbolizer` reads them and how long
    /// it may take, and the bounds on zips of dSYMs.
    struct Symbols: Decodable {
        var directory: String?
        var llvmSymbolizer: String?
        var symbolizerTimeoutSeconds: Double?
        var uploadCPUSeconds: Double?
        var maxZipEntries: Int?
        var maxExtractedBytes: Int64?
        var maxCompressionRatio: Int64?

        enum CodingKeys: String, CodingKey {
            case directory
            case llvmSymbolizer = "llvm_symbolizer"
            case symbolizerTimeoutSeconds = "symbolizer_timeout_seconds"
            case uploadCPUSeconds = "upload_cpu_seconds"
            case maxZipEntries = "max_zip_entries"
            case maxExtractedBytes = "max_extracted_bytes"
            case maxCompressionRatio = "max_compression_ratio"
        }

        /// Every problem of the section's values, named by key.
        var validationErrors: [String] {
            var errors: [String] = []
            for (name, value) in [
                ("symbols.symbolizer_timeout_seconds", symbolizerTimeoutSeconds),
                ("symbols.upload_cpu_seconds", uploadCPUSeconds),
            ] {
                if let value, !(value > 0 && value <= 3_600) {
                    errors.append("\(name) must be more than 0 and at most 3600, got \(value)")
                }
            }
            for (name, value) in [
                ("symbols.max_zip_entries", maxZipEntries.map(Int64.init)),
                ("symbols.max_extracted_bytes", maxExtractedBytes),
                ("symbols.max_compression_ratio", maxCompressionRatio),
            ] {
                if let value, value < 1 { errors.append("\(name) must be at least 1, got \(value)") }
            }
            return errors
        }
    }

    var symbols: Symbols?

    /// The database options this file sets (symbol directory, symbolizer, zip bounds) over `options`.
    func databaseOptions(_ options: Database.Options = Database.Options()) -> Database.Options {
        var options = options
        if let directory = symbols?.directory { options.symbolDirectory = directory }
        if let executable = symbols?.llvmSymbolizer { options.llvmSymbolizer = executable }
        if let seconds = symbols?.symbolizerTimeoutSeconds { options.symbolizerTimeoutSeconds = seconds }
        if let seconds = symbols?.uploadCPUSeconds { options.symbolArchive.maxCPUSeconds = seconds }
        if let entries = symbols?.maxZipEntries { options.symbolArchive.maxEntries = entries }
        if let bytes = symbols?.maxExtractedBytes { options.symbolArchive.maxExtractedBytes = bytes }
        if let ratio = symbols?.maxCompressionRatio { options.symbolArchive.maxRatio = ratio }
        if let seconds = database?.timeoutSeconds { options.timeoutSeconds = seconds }
        if let seconds = database?.explorerWriteSeconds { options.explorerWriteSeconds = seconds }
        if let rows = database?.explorerVersionRows { options.explorerVersionRows = rows }
        if let seconds = database?.explorerVersionSeconds { options.explorerVersionSeconds = seconds }
        if let compaction = database?.rawCompaction { options.rawCompaction = compaction }
        return options
    }

    var server: Server?
    var database: DatabaseSection?
    var limits: IngestLimits?
    /// The same `limits:` section, read for the rate limits, backpressure, quota and disk guard.
    var governance: GovernanceLimits?
    var analysis: Analysis?
    var alerts: Alerts?
    var metrics: Metrics?
    /// `retention:` — how long each kind of data is kept (defaults in ``RetentionPolicy``).
    var retention: RetentionPolicy?
    /// The same `retention:` section, read for the pruning schedule.
    var retentionSchedule: RetentionSchedule?

    /// `retention.prune_interval_minutes`: time between two pruning runs of the server.
    struct RetentionSchedule: Decodable {
        var pruneIntervalMinutes: Int?
        enum CodingKeys: String, CodingKey { case pruneIntervalMinutes = "prune_interval_minutes" }
    }

    /// `metrics`: the window and version bound of the per-app figures on `/metrics`.
    struct Metrics: Decodable {
        var windowDays: Int?
        var versionsPerApp: Int?
        var lastDay: String?

        enum CodingKeys: String, CodingKey {
            case windowDays = "window_days"
            case versionsPerApp = "versions_per_app"
            case lastDay = "last_day"
        }
    }

    /// `alerts.rules_file`: the alert rule file.
    struct Alerts: Decodable {
        var rulesFile: String?
        enum CodingKeys: String, CodingKey { case rulesFile = "rules_file" }
    }

    /// Signpost conventions and the handler flag threshold.
    struct Analysis: Decodable {
        var conventions: SignpostConventions?
        var handlerFlag: HandlerFlagRule?

        enum CodingKeys: String, CodingKey {
            case conventions
            case handlerFlag = "expiration_handler_flag"
        }
    }

    /// Reads and decodes `path`, naming the file and the problem on failure.
    static func load(_ path: String) throws -> ConfigFile {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw CommandError("cannot read config file \(path): \(error.localizedDescription)")
        }
        do {
            let file = try YAMLDecoder().decode(ConfigFile.self, from: text)
            if let days = file.metrics?.windowDays, !(1...3_660).contains(days) {
                throw CommandError("config file \(path): metrics.window_days must be 1…3660, got \(days)")
            }
            if let versions = file.metrics?.versionsPerApp, versions < 1 {
                throw CommandError("config file \(path): metrics.versions_per_app must be at least 1, got \(versions)")
            }
            if let hours = file.server?.sessionHours, !(1...720).contains(hours) {
                throw CommandError("config file \(path): server.session_hours must be 1…720, got \(hours)")
            }
            if let day = file.metrics?.lastDay, UTCDay(day) == nil {
                throw CommandError("config file \(path): metrics.last_day must be a date YYYY-MM-DD, got '\(day)'")
            }
            if let seconds = file.database?.explorerWriteSeconds, !(0...60).contains(seconds) {
                throw CommandError(
                    "config file \(path): database.explorer_write_seconds must be 0…60, got \(seconds)")
            }
            if let seconds = file.database?.explorerVersionSeconds, !(0...60).contains(seconds) {
                throw CommandError(
                    "config file \(path): database.explorer_version_seconds must be 0…60, got \(seconds)")
            }
            if let rows = file.database?.explorerVersionRows, !(0...1_000_000).contains(rows) {
                throw CommandError(
                    "config file \(path): database.explorer_version_rows must be 0…1000000, got \(rows)")
            }
            for (name, value) in [
                ("server.read_timeout_seconds", file.server?.readTimeoutSeconds),
                ("server.idle_timeout_seconds", file.server?.idleTimeoutSeconds),
                ("server.max_header_bytes", file.server?.maxHeaderBytes),
                ("server.max_connections", file.server?.maxConnections),
                ("server.shutdown_grace_seconds", file.server?.shutdownGraceSeconds),
                ("database.timeout_seconds", file.database?.timeoutSeconds),
                ("limits.max_inflight_bytes", file.governance?.maxInflightBytes),
                ("limits.max_queued_documents", file.governance?.maxQueuedDocuments),
                ("limits.app_daily_documents", file.governance?.appDailyDocuments),
            ] {
                if let value, value < 1 {
                    throw CommandError("config file \(path): \(name) must be at least 1, got \(value)")
                }
            }
            if let keyBytes = file.limits?.maxIdempotencyKeyBytes,
                !(1...IngestLimits.storedIdempotencyKeyBytes).contains(keyBytes)
            {
                throw CommandError(
                    "config file \(path): limits.max_idempotency_key_bytes must be 1…\(IngestLimits.storedIdempotencyKeyBytes) (what the stores keep), got \(keyBytes)"
                )
            }
            if let limits = file.governance {
                for (name, value) in [
                    ("ingest_rate_per_key", limits.ingestRatePerKey),
                    ("ingest_burst_per_key", limits.ingestBurstPerKey),
                    ("ingest_rate_per_ip", limits.ingestRatePerIP), ("ingest_burst_per_ip", limits.ingestBurstPerIP),
                ] where !(value >= 0 && value.isFinite) {
                    throw CommandError("config file \(path): limits.\(name) must be 0 (off) or more, got \(value)")
                }
            }
            if let errors = file.retention?.validationErrors, let first = errors.first {
                throw CommandError("config file \(path): \(first)")
            }
            if let minutes = file.retentionSchedule?.pruneIntervalMinutes, !(1...1_440).contains(minutes) {
                throw CommandError(
                    "config file \(path): retention.prune_interval_minutes must be 1…1440, got \(minutes)")
            }
            if let executable = file.symbols?.llvmSymbolizer, !FileManager.default.isExecutableFile(atPath: executable)
            {
                throw CommandError(
                    "config file \(path): symbols.llvm_symbolizer \(executable) is not an executable file")
            }
            if let first = file.symbols?.validationErrors.first {
                throw CommandError("config file \(path): \(first)")
            }
            if let first = file.query?.validationErrors.first {
                throw CommandError("config file \(path): \(first)")
            }
            if let errors = file.analysis?.conventions?.validationErrors(), !errors.isEmpty {
                throw CommandError("config file \(path): analysis.conventions: \(errors.joined(separator: "; "))")
            }
            return file
        } catch let error as CommandError {
            throw error
        } catch {
            throw CommandError("config file \(path) is invalid: \(error)")
        }
    }
}

/// A failure to report to the user as one line, with exit code 1 (or the given code).
struct CommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
