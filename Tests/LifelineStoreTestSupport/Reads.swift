import LifelineAnalysis
import LifelineSQLite

extension Database {
    /// The ``AggregateReader`` queries one by one, each in its own read transaction on the
    /// store's reader threads (tests of the store's rows).
    package var reads: Reads { Reads(database: self) }
}

/// See ``LifelineSQLite/Database/reads``.
package struct Reads: Sendable {
    let database: Database

    package func apps() async throws -> [AppInfo] { try await database.read { try await $0.apps() } }
    package func hasApp(_ app: String) async throws -> Bool { try await database.read { try await $0.hasApp(app) } }
    package func usage(_ scope: Scope) async throws -> [UsageRow] {
        try await database.read { try await $0.usage(scope) }
    }
    package func exits(_ scope: Scope) async throws -> [ExitRow] {
        try await database.read { try await $0.exits(scope) }
    }
    package func signposts(_ scope: Scope, categories: [String]) async throws -> [SignpostRow] {
        try await database.read { try await $0.signposts(scope, categories: categories) }
    }
    package func buckets(_ scope: Scope, source: HistogramSource) async throws -> [BucketRow] {
        try await database.read { try await $0.buckets(scope, source: source) }
    }
    package func diagnostics(_ scope: Scope) async throws -> [DiagnosticRow] {
        try await database.read { try await $0.diagnostics(scope) }
    }
    package func crashGroups(app: String, ids: [Int64]) async throws -> [CrashGroupInfo] {
        try await database.read { try await $0.crashGroups(app: app, ids: ids) }
    }
}

extension Database {
    /// Runs `body` with an ``Analyzer`` (default conventions) over one read transaction.
    package func analyze<T: Sendable>(
        conventions: SignpostConventions = .init(), _ body: @escaping @Sendable (Analyzer) async throws -> T
    ) async throws -> T {
        try await AnalysisRunner(source: self, conventions: conventions).analyze(body)
    }
}
