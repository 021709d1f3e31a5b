import Foundation
@_exported import LifelineTestFixtures
import LifelineAnalysis
import LifelineIngest
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

    /// Ingests JSON documents (plain) of `app` through the pipeline and writer of the HTTP API.
    package func ingest(
        _ documents: [String], app: String = "com.example.notes", receivedAt: Int64 = 1_000
    ) async throws {
        try await IngestWriter.withWriter(database: database, logger: .quiet) { writer in
            try await Self.ingest(documents, into: writer, app: app, receivedAt: receivedAt)
        }
    }

    /// Ingests JSON documents (plain) of `app` through the pipeline of the HTTP API into a running
    /// `writer` (acknowledged: stored, not necessarily folded yet).
    package static func ingest(
        _ documents: [String], into writer: IngestWriter, app: String = "com.example.notes", receivedAt: Int64 = 1_000
    ) async throws {
        let ingestor = Ingestor(writer: writer)
        for document in documents {
            _ = try await ingestor.ingest(
                body: ByteBuffer(string: document), encoding: .identity, family: nil, app: app,
                idempotencyKey: nil, receivedAt: receivedAt)
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
