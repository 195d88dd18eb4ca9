// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "cksync-linux",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "SyncCore", targets: ["SyncCore"]),
        .library(name: "SyncCrypto", targets: ["SyncCrypto"]),
        .library(name: "SyncClient", targets: ["SyncClient"]),
        .library(name: "SyncKit", targets: ["SyncKit"]),
        .library(name: "SyncServer", targets: ["SyncServer"]),
        .library(name: "SyncTesting", targets: ["SyncTesting"]),
        .library(name: "SyncTables", targets: ["SyncTables"]),
        .library(name: "SyncTablesTesting", targets: ["SyncTablesTesting"]),
        .library(name: "VCard", targets: ["VCard"]),
        .library(name: "LocalSystem", targets: ["LocalSystem"]),
        .library(name: "Listeners", targets: ["Listeners"]),
        .library(name: "ContactsModel", targets: ["ContactsModel"]),
        .library(name: "ContactsLocal", targets: ["ContactsLocal"]),
        .library(name: "ContactsStore", targets: ["ContactsStore"]),
        .library(name: "ContactsTUI", targets: ["ContactsTUI"]),
        .library(name: "ContactsDAV", targets: ["ContactsDAV"]),
        .executable(name: "sync-server", targets: ["sync-server"]),
        .executable(name: "contacts", targets: ["contacts"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "SyncCore",
            swiftSettings: swiftSettings
        ),
        // CloudKit's client side without the engine: Container, Database, Record, the one HTTP
        // client and the one push-socket client of the project.
        // The cryptography of encryptedValues: scrypt account keys, wrapped zone keys, sealed fields.
        .target(
            name: "SyncCrypto",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SyncClient",
            dependencies: [
                "SyncCore", "SyncCrypto", "LocalSystem",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        // The engine (CKSyncEngine's counterpart). Apps write `import SyncKit` where they wrote
        // `import CloudKit`: it re-exports SyncClient and SyncCore.
        .target(
            name: "SyncKit",
            dependencies: [
                "SyncCore", "SyncClient", "SyncCrypto",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The local machine's primitives every program shares: the one file lock, the one process launcher,
        // the one file-status question, and an environment variable read without copying the whole environment.
        // Foundation and Glibc only, so the server, the client, the tests' helpers and the contacts app import it.
        // Where a server listens: a TCP address and the TLS files for it, shared by the record server
        // and the CardDAV bridge.
        .target(
            name: "Listeners",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LocalSystem",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SyncServer",
            dependencies: [
                "SyncCore", "Listeners", "LocalSystem",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SyncTesting",
            dependencies: [
                "SyncCore",
                "LocalSystem",
                "SyncCrypto",
                "SyncClient",
                "SyncServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                // The in-process transport's connections (RouterTransport).
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        // Declared GRDB tables synced through SyncKit, with no sync code of the app's own.
        .target(
            name: "SyncTables",
            dependencies: [
                "SyncCore", "SyncClient", "SyncKit",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The same sync with the server in this process, for tests and previews.
        .target(
            name: "SyncTablesTesting",
            dependencies: ["SyncClient", "SyncTesting"],
            swiftSettings: swiftSettings
        ),
        // docs/TABLES.md's example: notes with tags and attachments, built only on SyncTables.
        .target(
            name: "NotesExample",
            dependencies: ["SyncKit", "SyncTables", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Examples/Notes/NotesExample",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "notes",
            dependencies: [
                "NotesExample", "SyncKit", "SyncTables",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/Notes/notes",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotesExampleTests",
            dependencies: [
                "NotesExample", "LocalSystem", "SyncKit", "SyncTables", "SyncTesting", "TestTraits",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Examples/Notes/Tests",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VCard",
            swiftSettings: swiftSettings
        ),
        // The contacts app in three parts. The model: a contact and everything that needs only the contact
        // (validation, dates, templates, merging, search, CSV and vCard mapping); no storage, no sync
        // (SyncCore only for the zone IDs that say which book a conflict is in).
        .target(
            name: "ContactsModel",
            dependencies: ["VCard", "SyncCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // The local machine: the zero-setup server's supervision, the external editor, the data directory
        // and its private files and locks. Nothing of the synced data.
        .target(
            name: "ContactsLocal",
            dependencies: ["ContactsModel", "LocalSystem", "SyncCore", "SyncCrypto", "SyncClient"],
            swiftSettings: swiftSettings
        ),
        // The synced store: `ContactsDevice`, the one front door (it owns its transactions; GRDB stays
        // inside), and the engine delegate that keeps it in sync.
        .target(
            name: "ContactsStore",
            dependencies: [
                "ContactsModel", "ContactsLocal", "CSQLiteConfig", "LocalSystem", "SyncCore", "SyncCrypto", "SyncKit",
                "VCard", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The SQLite settings Swift cannot reach (`sqlite3_db_config` is variadic).
        .target(
            name: "CSQLiteConfig",
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        .systemLibrary(
            name: "CNcursesw",
            providers: [.apt(["libncursesw5-dev"])]
        ),
        // A terminal as a grid of cells over ncursesw: keys in, safe text out, restored on every exit.
        .target(
            name: "Terminal",
            dependencies: ["CNcursesw", "ContactsModel"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ContactsTUI",
            dependencies: ["ContactsModel", "ContactsLocal", "ContactsStore", "SyncCore", "Terminal"],
            swiftSettings: swiftSettings
        ),
        // The CardDAV bridge: a device's address books served to DAV clients (phones, Thunderbird, khard
        // with vdirsyncer) from the decrypted contacts on the device.
        .target(
            name: "ContactsDAV",
            dependencies: [
                "ContactsModel", "ContactsLocal", "ContactsStore", "Listeners", "LocalSystem", "SyncCore", "VCard",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The release's version and the commit an executable was built from, for `--version`.
        .target(
            name: "BuildInfo",
            dependencies: ["SyncCore"],
            swiftSettings: swiftSettings,
            plugins: ["BuildCommit"]
        ),
        .plugin(name: "BuildCommit", capability: .buildTool()),
        .executableTarget(
            name: "contacts",
            dependencies: [
                "BuildInfo", "ContactsModel", "ContactsLocal", "ContactsStore", "ContactsTUI", "ContactsDAV",
                "Listeners",
                "SyncClient", "Terminal",
                "SyncCore", "SyncCrypto", "SyncKit", "SyncServer", "VCard",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "sync-server",
            dependencies: [
                "BuildInfo", "Listeners", "SyncServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "sync-bench",
            dependencies: [
                "BuildInfo", "SyncCore", "SyncCrypto", "SyncKit", "SyncServer", "SyncTables", "SyncTesting",
                "ContactsModel",
                "ContactsLocal",
                "ContactsStore", "ContactsTUI", "Terminal", "VCard",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The in-run reference of `sync-bench contacts`' no-op sync: the least such a sync must do (a SQLite
        // file opened, one request, its JSON answer), with the libraries `contacts` uses and none of its code.
        .executableTarget(
            name: "noop-reference",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SyncBenchTests",
            dependencies: ["sync-bench", "noop-reference", "LocalSystem", "SyncCore", "SyncTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BuildInfoTests",
            dependencies: ["BuildInfo", "SyncCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SyncCryptoTests",
            dependencies: ["SyncCrypto"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LocalSystemTests",
            dependencies: ["LocalSystem", "SyncTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VCardTests",
            dependencies: ["VCard"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ContactsModelTests",
            dependencies: ["ContactsModel", "VCard"],
            swiftSettings: swiftSettings
        ),
        // The `contacts` program, run as a person or a script runs it.
        .testTarget(
            name: "ContactsCLITests",
            dependencies: [
                "ContactsDAV", "ContactsModel", "ContactsLocal", "ContactsStore", "ContactsTesting", "SyncCore",
                "SyncCrypto", "SyncKit", "SyncTesting", "VCard",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Read from the source tree by path (LocalServerTests).
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ContactsStoreTests",
            dependencies: [
                "ContactsModel", "ContactsLocal", "ContactsStore", "ContactsTesting", "SyncCore", "SyncCrypto",
                "SyncKit", "SyncServer", "TestTraits",
                "SyncTesting", "VCard",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Read from the source tree by path (UpgradeTests).
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ContactsDAVTests",
            dependencies: [
                "ContactsDAV", "ContactsModel", "ContactsStore", "ContactsTesting", "Listeners", "LocalSystem",
                "SyncClient", "SyncCore", "SyncCrypto", "SyncServer",
                "SyncTesting",
                "VCard",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Reads the package's own sources and docs: no module of it.
        .testTarget(
            name: "ArchitectureTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ListenersTests",
            dependencies: ["Listeners"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TerminalTests",
            dependencies: ["CNcursesw", "ContactsModel", "Terminal"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ContactsTUITests",
            dependencies: [
                "ContactsTUI", "ContactsModel", "ContactsLocal", "ContactsStore", "ContactsTesting", "SyncTesting",
                "Terminal", "TestTraits",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SyncClientTests",
            dependencies: [
                "SyncClient", "SyncCore", "SyncCrypto", "SyncServer", "SyncTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SyncCoreTests",
            dependencies: ["SyncCore"],
            swiftSettings: swiftSettings
        ),
        .target(
            // What the contacts test targets share: temporary data directories, devices of one account on a
            // real server; not part of any product.
            name: "ContactsTesting",
            dependencies: ["ContactsLocal", "ContactsStore", "SyncCrypto", "SyncServer", "SyncTesting"],
            path: "Tests/ContactsTesting",
            swiftSettings: swiftSettings
        ),
        .target(
            // Swift Testing traits the test targets share; not part of any product.
            name: "TestTraits",
            dependencies: ["SyncTesting"],
            path: "Tests/TestTraits",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SyncKitTests",
            dependencies: ["SyncCore", "SyncKit", "SyncServer", "SyncTesting", "TestTraits"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SyncTablesTests",
            dependencies: [
                "SyncClient", "SyncCore", "SyncCrypto", "SyncKit", "SyncServer", "SyncTables", "SyncTesting",
                "TestTraits",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SyncTablesTestingTests",
            dependencies: [
                "SyncTables", "SyncTablesTesting", "SyncTesting", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SyncTestingTests",
            dependencies: ["SyncCore", "SyncServer", "SyncTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SyncServerTests",
            dependencies: [
                "SyncCore", "SyncServer", "SyncTesting", "TestTraits",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
