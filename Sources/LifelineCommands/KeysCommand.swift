import ArgumentParser
import Foundation
import LifelineStore

/// `lifeline keys …`: create, list and revoke API keys.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage API keys (stored hashed; a key is shown once, when created).",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a key and print it once, alone on the last line of standard output.",
            discussion: """
                Roles: ingest (posts payloads of one app; --app required), read (queries; --app \
                optional, absent means all apps), admin (manages keys and reloads; no --app).
                """
        )

        @OptionGroup var global: GlobalOptions

        @Option(help: "ingest, read or admin.")
        var role: Role

        @Option(help: "Bundle identifier the key is bound to (required for ingest keys).")
        var app: String?

        func validate() throws {
            switch role {
            case .ingest where app == nil:
                throw ValidationError("--app <bundle-id> is required for ingest keys")
            case .admin where app != nil:
                throw ValidationError("admin keys are not bound to an app: drop --app")
            default:
                break
            }
            if let app, app.isEmpty || app.contains(where: \.isWhitespace) {
                throw ValidationError("--app must be a bundle identifier such as com.example.app")
            }
        }

        func run() throws {
            let database = try Database(path: global.db)
            try database.migrate()
            let (key, token) = try database.createKey(role: role, app: app)
            let scope = key.app.map { "app \($0)" } ?? "all apps"
            print("created \(key.role.rawValue) key \(key.id) for \(scope); it is shown only once:")
            print(token)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List keys (ids, roles, apps, state; never secrets).")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print JSON instead of a table.")
        var json = false

        func run() throws {
            let database = try Database(path: global.db)
            try database.migrate()
            let keys = try database.listKeys()
            if json {
                let rows = keys.map { key in
                    [
                        "id": key.id, "role": key.role.rawValue, "app": key.app ?? "*",
                        "created_at": Self.format(key.createdAt),
                        "revoked_at": key.revokedAt.map(Self.format) ?? "",
                    ]
                }
                let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            print("ID            ROLE    APP                             CREATED               STATE")
            for key in keys {
                let state = key.revokedAt.map { "revoked \(Self.format($0))" } ?? "active"
                print(
                    key.id.padding(toLength: 14, withPad: " ", startingAt: 0)
                        + key.role.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
                        + (key.app ?? "*").padding(toLength: 32, withPad: " ", startingAt: 0)
                        + Self.format(key.createdAt).padding(toLength: 22, withPad: " ", startingAt: 0) + state)
            }
        }

        static func format(_ epochSeconds: Int64) -> String {
            Date(timeIntervalSince1970: Double(epochSeconds)).formatted(.iso8601)
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a key by id; a running server stops accepting it within its key cache time (5 s).")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The key id (the part after ll_, shown by keys list).")
        var id: String

        func run() throws {
            let database = try Database(path: global.db)
            try database.migrate()
            guard try database.revokeKey(id: id) else {
                throw CommandError("no active key with id \(id)")
            }
            print("revoked \(id)")
        }
    }
}

extension Role: ExpressibleByArgument {}
