import Foundation
import NIOSSL
import PostgresNIO

/// Where a PostgreSQL database is: parsed from `postgres://user[:password]@host[:port]/database?…`
/// (or `postgresql://`). Query parameters: `sslmode` (`disable`, `prefer` — the default —,
/// `require`, `verify-full`), `sslrootcert` (a CA file for `verify-full`), `password_file` (the
/// password in a file, first line), `pool` (connections, default 10). Without a password in the
/// URL: the file, else `PGPASSWORD`. The password is never part of ``description``.
package struct PostgresLocation: Sendable, CustomStringConvertible {
    package enum TLSMode: String, Sendable {
        case disable, prefer, require
        case verifyFull = "verify-full"
    }

    package var host: String
    package var port: Int
    package var username: String
    package var password: String?
    package var database: String
    package var tls: TLSMode
    package var rootCertificate: String?
    package var poolSize: Int

    /// Whether `text` names a PostgreSQL database (else it is a SQLite path).
    package static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Parses `url`; `environment` gives `PGPASSWORD`.
    package init(
        _ url: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(PostgresStoreError) {
        guard Self.isURL(url), let components = URLComponents(string: url), let host = components.host, !host.isEmpty
        else {
            throw PostgresStoreError("not a PostgreSQL URL (postgres://user@host:port/database): \(Self.redacted(url))")
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        let database = String(components.path.drop { $0 == "/" })
        self.database = database.isEmpty ? self.username : (database.removingPercentEncoding ?? database)
        var parameters: [String: String] = [:]
        for item in components.queryItems ?? [] { parameters[item.name] = item.value ?? "" }
        let known: Set = ["sslmode", "sslrootcert", "password_file", "pool"]
        if let unknown = parameters.keys.sorted().first(where: { !known.contains($0) }) {
            throw PostgresStoreError(
                "unknown parameter \(unknown) in the PostgreSQL URL (known: \(known.sorted().joined(separator: ", ")))")
        }
        guard let mode = TLSMode(rawValue: parameters["sslmode"] ?? "prefer") else {
            throw PostgresStoreError("sslmode must be disable, prefer, require or verify-full")
        }
        self.tls = mode
        self.rootCertificate = parameters["sslrootcert"]
        if let text = parameters["pool"] {
            guard let size = Int(text), (1...200).contains(size) else {
                throw PostgresStoreError("pool must be 1…200 connections, got \(text)")
            }
            self.poolSize = size
        } else {
            self.poolSize = 10
        }
        if let password = components.password {
            self.password = password.removingPercentEncoding ?? password
        } else if let file = parameters["password_file"] {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw PostgresStoreError("cannot read the password file \(file)")
            }
            self.password = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init)
        } else {
            self.password = environment["PGPASSWORD"]
        }
    }

    /// The URL without its password.
    package var description: String {
        "postgres://\(username)@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)&pool=\(poolSize)"
    }

    /// `url` with any password replaced by `***`, for messages.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? "postgres://…"
    }

    /// The TLS settings of `sslmode`: nil for `disable`; whether TLS is required.
    private func tlsSettings() -> (configuration: TLSConfiguration, required: Bool)? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch tls {
        case .disable: return nil
        case .prefer, .require:
            configuration.certificateVerification = .none
            return (configuration, tls == .require)
        case .verifyFull:
            if let rootCertificate { configuration.trustRoots = .file(rootCertificate) }
            return (configuration, true)
        }
    }

    /// The pool configuration of this location.
    /// The pool's configuration: connections time out after `timeout`, and so do statements, lock
    /// waits and transactions left idle (a node that lost its way must not hold a lock or a
    /// snapshot: `idle_in_transaction_session_timeout`).
    func clientConfiguration(timeout: Duration = .seconds(5)) throws(PostgresStoreError) -> PostgresClient.Configuration
    {
        let tls: PostgresClient.Configuration.TLS
        if let (settings, required) = tlsSettings() {
            tls = required ? .require(settings) : .prefer(settings)
        } else {
            tls = .disable
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.maximumConnections = poolSize
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = timeout
        let milliseconds =
            "\(timeout.components.seconds * 1_000 + timeout.components.attoseconds / 1_000_000_000_000_000)"
        configuration.options.additionalStartupParameters = [
            ("statement_timeout", milliseconds), ("lock_timeout", milliseconds),
            ("idle_in_transaction_session_timeout", milliseconds),
        ]
        return configuration
    }

    /// The configuration of one connection outside the pool (leader election).
    package func connectionConfiguration() throws(PostgresStoreError) -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        if let (settings, required) = tlsSettings() {
            let context: NIOSSLContext
            do {
                context = try NIOSSLContext(configuration: settings)
            } catch {
                throw PostgresStoreError("cannot set up TLS: \(error)")
            }
            tls = required ? .require(context) : .prefer(context)
        } else {
            tls = .disable
        }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }
}

/// A failure of the PostgreSQL store, with a message fit for an operator.
package struct PostgresStoreError: Error, CustomStringConvertible, Sendable {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
