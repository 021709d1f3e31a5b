// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "Lifeline",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "lifeline", targets: ["lifeline"]),
        // The client package an app adds (issue 27): Foundation and zlib only, nothing of the server.
        .library(name: "LifelineKit", targets: ["LifelineKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/weichsel/ZIPFoundation.git", from: "0.9.20"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CLifelineKitZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // The server's own zlib (raw copies deflated against a preset dictionary), apart from the
        // client package's so LifelineKit depends on nothing of the server.
        .systemLibrary(
            name: "CLifelineZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "LifelineKit",
            dependencies: ["CLifelineKitZlib"],
            swiftSettings: strict
        ),
        // Declarations of the MetricKit API surface (Linux only) and the adapters compiled against
        // them, so CI type-checks the MetricKit adapters where MetricKit does not exist.
        .target(
            name: "LifelineKitMetricKitCheck",
            dependencies: ["LifelineKit"],
            swiftSettings: strict + [.define("LIFELINEKIT_METRICKIT_STANDINS")]
        ),
        .testTarget(
            name: "LifelineKitTests",
            dependencies: ["LifelineKit", "lifeline"],
            swiftSettings: strict
        ),
        .target(
            name: "LifelineModel",
            swiftSettings: strict
        ),
        .target(
            name: "LifelineAnalysis",
            dependencies: ["LifelineModel"],
            swiftSettings: strict
        ),
        .target(
            name: "LifelineIngest",
            dependencies: [
                "LifelineModel",
                "CLifelineZlib",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "LifelineAlertState",
            swiftSettings: strict
        ),
        .target(
            name: "LifelineStorage",
            dependencies: [
                "LifelineModel",
                "LifelineAnalysis",
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "LifelineSQLite",
            dependencies: [
                "LifelineModel",
                "LifelineAnalysis",
                "LifelineIngest",
                "LifelineAlertState",
                "LifelineStorage",
                "CSQLite",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "LifelinePostgres",
            dependencies: [
                "LifelineModel",
                "LifelineAlertState",
                "LifelineAnalysis",
                "LifelineIngest",
                "LifelineStorage",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "LifelineAlerts",
            dependencies: [
                "LifelineAnalysis",
                "LifelineModel",
                "LifelineAlertState",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "LifelineReport",
            dependencies: [
                "LifelineModel",
                "LifelineAnalysis",
                "LifelineAlerts",
                "LifelineAlertState",
            ],
            swiftSettings: strict
        ),
        .target(
            name: "LifelineServer",
            dependencies: [
                "LifelineModel",
                "LifelineIngest",
                "LifelineStorage",
                "LifelineAnalysis",
                "LifelineAlerts",
                "LifelineAlertState",
                "LifelineReport",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "LifelineBackends",
            dependencies: [
                "LifelineServer",
                "LifelineSQLite",
                "LifelinePostgres",
                "LifelineStorage",
                "LifelineIngest",
                "LifelineAlerts",
                "LifelineAlertState",
                "LifelineAnalysis",
                "LifelineModel",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "LifelineSimulator",
            dependencies: [
                "LifelineModel",
                "LifelineKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "LifelineCommands",
            dependencies: [
                "LifelineModel",
                "LifelineIngest",
                "LifelineStorage",
                "LifelineSQLite",
                "LifelineServer",
                "LifelineBackends",
                "LifelineAlerts",
                "LifelineAlertState",
                "LifelineAnalysis",
                "LifelineSimulator",
                "LifelineReport",
                "LifelinePostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "lifeline",
            dependencies: ["LifelineCommands", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),
        // Test helpers in three layers, so a test target builds only what it tests: fixtures and
        // temporary directories (model only), a temporary SQLite database (the SQLite store), and
        // servers on either store (everything).
        .target(
            name: "LifelineTestFixtures",
            dependencies: [
                "LifelineModel",
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/LifelineTestFixtures",
            swiftSettings: strict
        ),
        .target(
            name: "LifelineStoreTestSupport",
            dependencies: [
                "LifelineTestFixtures",
                "LifelineSQLite",
                "LifelineStorage",
                "LifelineIngest",
                "LifelineAnalysis",
                "LifelineModel",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/LifelineStoreTestSupport",
            swiftSettings: strict
        ),
        .target(
            name: "LifelineTestSupport",
            dependencies: [
                "LifelineTestFixtures",
                "LifelineStoreTestSupport",
                "LifelineModel",
                "LifelineAlerts",
                "LifelineAlertState",
                "LifelineStorage",
                "LifelineBackends",
                "LifelineAnalysis",
                "LifelineIngest",
                "LifelineServer",
                "LifelineSQLite",
                "LifelinePostgres",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/LifelineTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LifelineModelTests",
            dependencies: ["LifelineTestFixtures", "LifelineModel"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LifelineAnalysisTests",
            dependencies: ["LifelineAnalysis", "LifelineModel"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LifelineSQLiteTests",
            dependencies: [
                "LifelineStoreTestSupport", "LifelineTestFixtures", "LifelineAlertState", "LifelineStorage", "LifelineSQLite",
                "LifelineIngest", "LifelineModel", "LifelineAnalysis",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LifelineServerTests",
            dependencies: [
                "LifelineTestSupport", "LifelineTestFixtures", "LifelineAlertState", "LifelineStorage",
                "LifelineIngest",
                "lifeline",
                "LifelineServer",
                "LifelineSQLite",
                "LifelineModel",
                "LifelineCommands",
                "LifelineReport",
                "LifelineAnalysis",
                "LifelineAlerts",
                "LifelineSimulator",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                "LifelinePostgres",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LifelineSimulatorTests",
            dependencies: [
                "LifelineTestSupport", "LifelineTestFixtures", "LifelineAlertState", "LifelineStorage",
                "LifelineIngest",
                "LifelineSimulator",
                "LifelineModel",
                "LifelineServer",
                "LifelineSQLite",
                "LifelineAlerts",
                "LifelineAnalysis",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LifelinePostgresTests",
            dependencies: [
                "LifelineTestSupport", "LifelineAlertState", "LifelineStorage",
                "LifelinePostgres",
                "LifelineSQLite",
                "LifelineIngest",
                "LifelineModel",
                "LifelineAnalysis",
                "LifelineSimulator",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LifelineAlertsTests",
            dependencies: [
                "LifelineTestSupport", "LifelineAlertState", "LifelineStorage",
                "LifelineIngest",
                "LifelineAlerts",
                "LifelineAnalysis",
                "LifelineModel",
                "LifelineSQLite",
                "LifelineServer",
                "LifelineCommands",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
