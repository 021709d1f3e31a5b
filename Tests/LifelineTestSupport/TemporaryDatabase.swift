import Foundation
import LifelineAnalysis
import LifelineIngest
import LifelineServer
import LifelineSQLite
import LifelineStorage
import Logging
import NIOCore

/// A fresh, migrated database file in its own temporary directory: the one test database of
/// every test target (removed when the last reference goes, or by ``remove()``).
package final class TemporaryDatabase: Sendable {
    package let directory: TemporaryDirectory
    package let database: Database

    package init(options: Database.Options = .init()) throws {
        directory = TemporaryDirectory()
        database = try directory.openDatabase(options)
    }

    /// Path of the database file.
    package var path: String { directory.databasePath }

    /// Writes `text` to `name` beside the database and returns its path.
    @discardableResult
    package func write(_ name: String, _ text: String) throws -> String { try directory.write(name, text) }

    /// A token for a new key.
    package func token(_ role: Role, app: String? = nil) throws -> String {
        try database.createKey(role: role, app: app).token
    }

    /// A server configuration on this database, on a free port, without logs, rate limits and retention off.
    package func config(options: Database.Options = .init(), limits: IngestLimits = .init()) -> ServerConfig {
        var config = ServerConfig.forTests(limits: limits)
        config.databasePath = path
        config.database = options
        return config
    }

    /// Ingests JSON documents (plain) of `app` through the pipeline and writer of the HTTP API.
    package func ingest(
        _ documents: [String], app: String = "com.example.notes", receivedAt: Int64 = 1_000
    ) async throws {
        try await IngestWriter.withWriter(database: database, logger: .quiet) { writer in
            let ingestor = Ingestor(writer: writer)
            for document in documents {
                _ = try await ingestor.ingest(
                    body: ByteBuffer(string: document), encoding: .identity, family: nil, app: app,
                    idempotencyKey: nil, receivedAt: receivedAt)
            }
        }
    }

    /// Runs `body` with an ``Analyzer`` over one read transaction of this database.
    package func analyze<T: Sendable>(
        conventions: SignpostConventions = .init(), _ body: @escaping @Sendable (Analyzer) async throws -> T
    ) async throws -> T {
        try await AnalysisRunner(source: database, conventions: conventions).analyze(body)
    }

    package func remove() { directory.remove() }
}

extension Logger {
    /// A logger that drops everything.
    package static let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
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
        config.logger = .quiet
        return config
    }
}
