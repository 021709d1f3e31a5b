import ArgumentParser
import Foundation
import LifelineSQLite
import LifelineStorage

/// `lifeline keys …`: create, list and revoke API keys.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage API keys (stored hashed; a key is shown once, when created or rotated).",
        subcommands: [Create.self, List.self, Revoke.self, Rotate.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a key and print it once, alone on the last line of standard output.",
            discussion: """
                Roles: ingest (posts payloads of one app; --app required), read (queries; --app \
                optional, absent means all apps), admin (manages keys and reloads; no --app).
                """
        )

        @OptionGroup var global: GlobalOptions

        @Option(help: "ingest, read, symbols (dSYM uploads from CI) or admin.")
        var role: Role

        @Option(help: "Bundle identifier the key is bound to (required for ingest and symbols keys).")
        var app: String?

        @Option(
            name: .customLong("expires-in"),
            help: "Make the key stop working after this long: 90d, 12h, 30m or 3600s (default: never).")
        var expiresIn: KeyDuration?

        func validate() throws {
            switch role {
            case .ingest where app == nil, .symbols where app == nil:
                throw ValidationError("--app <bundle-id> is required for \(role.rawValue) keys")
            case .admin where app != nil:
                throw ValidationError("admin keys are not bound to an app: drop --app")
            default:
                break
            }
            if let app, app.isEmpty || app.contains(where: \.isWhitespace) {
                throw ValidationError("--app must be a bundle identifier such as com.example.app")
            }
        }

        func run() async throws {
            let now = Int64(Date().timeIntervalSince1970)
            let expiresAt = expiresIn.map { now + $0.seconds }
            let key: APIKey
            let token: String
            if global.isPostgres {
                do {
                    (key, token) = try await global.withPostgres { store in
                        try await store.createKey(role: role, app: app, expiresAt: expiresAt, now: now)
                    }
                } catch {
                    throw CommandError("\(error)")
                }
            } else {
                let database = try Database(path: global.db)
                defer { database.checkpointForExit() }
                try database.migrate()
                (key, token) = try database.createKey(role: role, app: app, expiresAt: expiresAt, now: now)
            }
            let scope = key.app.map { "app \($0)" } ?? "all apps"
            let expiry = key.expiresAt.map { ", expires \(List.format($0))" } ?? ""
            print("created \(key.role.rawValue) key \(key.id) for \(scope)\(expiry); it is shown only once:")
            print(token)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List keys (ids, roles, apps, state; never secrets).")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print JSON instead of a table.")
        var json = false

        func run() async throws {
            let keys: [APIKey]
            if global.isPostgres {
                let listed = try? await global.withPostgres { store in try await store.listKeys() }
                guard let listed else { throw CommandError("cannot list the keys of \(global.dbDescription)") }
                keys = listed
            } else {
                let database = try Database(path: global.db)
                defer { database.checkpointForExit() }
                try database.migrate()
                keys = try database.listKeys()
            }
            if json {
                let rows = keys.map { key in
                    [
                        "id": key.id, "role": key.role.rawValue, "app": key.app ?? "*",
                        "created_at": Self.format(key.createdAt),
                        "revoked_at": key.revokedAt.map(Self.format) ?? "",
                        "expires_at": key.expiresAt.map(Self.format) ?? "",
                        "last_used_at": key.lastUsedAt.map(Self.format) ?? "",
                    ]
                }
                let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            print(
                "ID            ROLE    APP                             CREATED               LAST USED             STATE"
            )
            let now = Int64(Date().timeIntervalSince1970)
            for key in keys {
                var state = "active"
                if let revoked = key.revokedAt {
                    state = "revoked \(Self.format(revoked))"
                } else if let expires = key.expiresAt {
                    state = (key.isExpired(at: now) ? "expired " : "expires ") + Self.format(expires)
                }
                print(
                    key.id.padding(toLength: 14, withPad: " ", startingAt: 0)
                        + key.role.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
                        + (key.app ?? "*").padding(toLength: 32, withPad: " ", startingAt: 0)
                        + Self.format(key.createdAt).padding(toLength: 22, withPad: " ", startingAt: 0)
                        + (key.lastUsedAt.map(Self.format) ?? "never").padding(
                            toLength: 22, withPad: " ", startingAt: 0)
                        + state)
            }
        }

        static func format(_ epochSeconds: Int64) -> String {
            Date(timeIntervalSince1970: Double(epochSeconds)).formatted(.iso8601)
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a key by id; a running server stops accepting it within its key cache time (5 s).")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The key id (the part after ll_, shown by keys list).")
        var id: String

        func run() async throws {
            let revoked: Bool
            if global.isPostgres {
                let id = self.id
                let result = try? await global.withPostgres { store in try await store.revokeKey(id: id) }
                guard let result else { throw CommandError("cannot revoke \(id) on \(global.dbDescription)") }
                revoked = result
            } else {
                let database = try Database(path: global.db)
                defer { database.checkpointForExit() }
                try database.migrate()
                revoked = try database.revokeKey(id: id)
            }
            guard revoked else {
                throw CommandError("no active key with id \(id)")
            }
            print("revoked \(id)")
        }
    }
}

extension KeysCommand {
    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a key a new secret, printed once on the last line; the old one works for a grace period.",
            discussion: """
                The key keeps its id, role, app and expiry. Clients holding the old secret keep \
                working until the grace period ends (default 7d), so an app release or a CI secret \
                can be moved over without an outage; rotate again or revoke to end it sooner.
                """
        )

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The key id (the part after ll_, shown by keys list).")
        var id: String

        @Option(help: "How long the old secret stays valid: 7d, 24h, 30m, 0s (default 7d).")
        var grace: KeyDuration = KeyDuration(seconds: 7 * 86_400)

        func run() throws {
            let database = try Database(path: global.db)
            defer { database.checkpointForExit() }
            try database.migrate()
            let now = Int64(Date().timeIntervalSince1970)
            let (key, token) = try database.rotateKey(id: id, grace: grace.seconds, now: now)
            let until = key.previousValidUntil.map(List.format) ?? "now"
            print("rotated \(key.id); the old secret works until \(until); the new key is shown only once:")
            print(token)
        }
    }
}

/// A duration on the command line: a whole number with a unit, `90d`, `12h`, `30m` or `45s`.
struct KeyDuration: ExpressibleByArgument, Equatable {
    var seconds: Int64

    init(seconds: Int64) { self.seconds = seconds }

    init?(argument: String) {
        guard let unit = argument.last, let value = Int64(argument.dropLast()), value >= 0, value <= 36_500 * 86_400
        else { return nil }
        switch unit {
        case "d": seconds = value * 86_400
        case "h": seconds = value * 3_600
        case "m": seconds = value * 60
        case "s": seconds = value
        default: return nil
        }
        guard seconds <= 36_500 * 86_400 else { return nil }
    }

    var defaultValueDescription: String { "\(seconds)s" }
}

extension Role: ExpressibleByArgument {}
