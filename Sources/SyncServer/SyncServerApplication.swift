import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import ServiceLifecycle
import SyncCore

/// Builds the sync server: its routes, middleware, push hub and background compaction.
public enum SyncServerApplication {
    /// Builds the router with every route of the API (see `openapi.yaml`). `GET /metrics` is not
    /// one of them: ``MetricsListener`` serves it on an address of its own.
    /// - Parameter middleware: extra middleware run before every route, after error mapping
    ///   (SyncTesting injects faults here).
    public static func makeRouter(
        store: any RecordStore, pushHub: PushHub, configuration: SyncServerConfiguration,
        middleware: [any RouterMiddleware<SyncRequestContext>] = []
    ) -> Router<SyncRequestContext> {
        let tokens = ChangeTokenSigner(store: store, clock: configuration.clock)
        let store = MeasuredRecordStore(base: store)
        let body = BodyCoding(limits: configuration.limits)
        let router = Router(context: SyncRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: ErrorMiddleware())
        for item in middleware { add(item, to: router) }

        router.on(.health) { _, _ in
            try body.response(HealthInfo(status: "ok", version: configuration.version.description))
        }
        router.on(.limits) { _, _ in
            try body.response(configuration.limits)
        }

        let accounts = AccountRoutes(store: store, pushHub: pushHub, configuration: configuration, body: body)
        let open = router.group().add(
            middleware: AddressRateLimitMiddleware(
                rateLimiter: RateLimiter(configuration.addressRateLimit, clock: configuration.clock)))
        // A group of its own, so that this limit applies to account creation only.
        open.group().add(
            middleware: AddressRateLimitMiddleware(
                rateLimiter: RateLimiter(configuration.accountCreationRateLimit, clock: configuration.clock),
                counting: "account creations")
        ).on(.createAccount, use: accounts.createAccount)
        open.on(.signIn, use: accounts.signIn)

        let sessions = SessionLifetime(
            lifetime: configuration.sessionLifetime, clock: configuration.clock,
            maximumLifetime: configuration.sessionMaxLifetime)
        let signedIn = router.group().add(
            middleware: AuthenticationMiddleware(
                store: store, rateLimiter: RateLimiter(configuration.userRateLimit, clock: configuration.clock),
                sessions: sessions))
        signedIn.on(.signOut, use: accounts.signOut)
        signedIn.on(.account, use: accounts.account)
        let lifecycle = AccountLifecycleRoutes(
            store: store, pushHub: pushHub, configuration: configuration, body: body, passwords: accounts.passwords)
        signedIn.on(.changePassword, use: lifecycle.changePassword)
        signedIn.on(.deleteAccount, use: lifecycle.deleteAccount)
        let sessionRoutes = SessionRoutes(store: store, pushHub: pushHub, configuration: configuration, body: body)
        signedIn.on(.sessions, use: sessionRoutes.list)
        signedIn.on(.endSession, use: sessionRoutes.end)
        signedIn.on(.endOtherSessions, use: sessionRoutes.endOthers)
        signedIn.on(.usage, use: AccountUsageRoutes(store: store, body: body).usage)
        let encryption = AccountEncryptionRoutes(
            store: store, pushHub: pushHub, configuration: configuration, body: body)
        signedIn.on(.encryptionSettings, use: encryption.settings)
        signedIn.on(.createEncryptionSettings, use: encryption.createSettings)
        signedIn.on(.createKeyPair, use: encryption.createKeyPair)
        signedIn.on(.changeEncryption, use: encryption.change)
        signedIn.on(.resetEncryption, use: encryption.reset)
        let recovery = AccountRecoveryRoutes(store: store, configuration: configuration, body: body)
        signedIn.on(.setUpRecovery, use: recovery.setUp)
        signedIn.on(.openRecovery, use: recovery.open)
        PushRoute(
            pushHub: pushHub, store: store, sessions: sessions,
            maximumSockets: configuration.maximumPushSocketsPerAccount
        ).register(on: signedIn)

        let database = DatabaseRoutes(
            store: store, pushHub: pushHub, configuration: configuration, body: body, tokens: tokens)
        signedIn.on(.listZones, use: database.listZones)
        signedIn.on(.modifyZones, use: database.modifyZones)
        signedIn.on(.fetchDatabaseChanges, use: database.fetchDatabaseChanges)
        signedIn.on(.modifyRecords, use: database.modifyRecords)
        signedIn.on(.fetchZoneChanges, use: database.fetchZoneChanges)
        signedIn.on(.lookupRecords, use: database.lookupRecords)
        signedIn.on(.downloadAsset, use: database.downloadAsset)
        let uploads = AssetUploadRoutes(store: store, configuration: configuration, body: body)
        signedIn.on(.createUpload, use: uploads.create)
        signedIn.on(.uploadStatus, use: uploads.status)
        signedIn.on(.appendToUpload, use: uploads.append)
        let shares = ShareRoutes(store: store, pushHub: pushHub, body: body, limits: configuration.limits)
        signedIn.on(.lookupUsers, use: shares.lookupUsers)
        signedIn.on(.saveShare, use: shares.save)
        signedIn.on(.fetchShare, use: shares.fetch)
        signedIn.on(.deleteShare, use: shares.delete)
        signedIn.on(.shareMetadata, use: shares.metadata)
        signedIn.on(.acceptShare, use: shares.accept)
        signedIn.on(.declineShare, use: shares.decline)
        signedIn.on(.invitations, use: shares.invitations)
        // Last, so that it runs only for requests no route took (see the type).
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
        return router
    }

    private static func add<M: RouterMiddleware>(_ middleware: M, to router: Router<SyncRequestContext>)
    where M.Context == SyncRequestContext {
        router.add(middleware: middleware)
    }

    /// Builds the application, ready to run in a `ServiceGroup`: one TCP listener, with the
    /// server's background work. Put ``pushShutdown(_:)`` of `pushHub` after it in that group.
    /// - Parameters:
    ///   - host: the address to listen on; keep the default loopback unless the server should be reachable from other machines.
    ///   - port: the port; 0 picks a free one, reported through `onServerRunning`.
    public static func makeApplication(
        store: any RecordStore, configuration: SyncServerConfiguration = .init(), host: String = "127.0.0.1",
        port: Int = 8080, pushHub: PushHub = PushHub(), middleware: [any RouterMiddleware<SyncRequestContext>] = [],
        services: [any Service] = [], logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = makeRouter(
            store: store, pushHub: pushHub, configuration: configuration, middleware: middleware)
        return application(
            router: router, address: .hostname(host, port: port), server: defendedChannel(router, configuration),
            services: backgroundServices(store: store, pushHub: pushHub, configuration: configuration, logger: logger)
                + services, logger: logger, onServerRunning: onServerRunning)
    }

    /// One listener of a server: `router` served at `address`, with the HTTP defences, push
    /// sockets, and TLS when `tls` is given. Several listeners may share one router (and so one
    /// store and push hub); each runs its own `services` (give the background work to one).
    /// - Parameter onServerRunning: called with the TCP port once it listens (0 on a Unix socket).
    public static func makeListener(
        router: Router<SyncRequestContext>, address: BindAddress, tls: TLSConfiguration? = nil,
        configuration: SyncServerConfiguration, services: [any Service] = [], logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let defended = defendedChannel(router, configuration)
        // The TLS handler goes in front of the defended channel's HTTP handlers; the connection
        // guard and the timeouts stay in front of it, so that a handshake counts and is timed.
        let server = try tls.map { try HTTPServerBuilder.tls(defended, tlsConfiguration: $0) } ?? defended
        return application(
            router: router, address: address, server: server, services: services, logger: logger,
            onServerRunning: onServerRunning)
    }

    /// Hummingbird's HTTP/1.1 channel with push sockets and the HTTP defences.
    private static func defendedChannel(_ router: Router<SyncRequestContext>, _ configuration: SyncServerConfiguration)
        -> HTTPServerBuilder
    {
        // Push sockets are exempt from the HTTP timeouts: the automatic ping ends dead ones.
        DefendedHTTPChannel.builder(
            webSocketRouter: WebSocketUpgradeRouter(router: router),
            webSocket: .init(autoPing: .enabled(timePeriod: .seconds(30))), configuration: configuration)
    }

    private static func application(
        router: Router<SyncRequestContext>, address: BindAddress, server: HTTPServerBuilder, services: [any Service],
        logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void
    ) -> some ApplicationProtocol {
        Application(
            router: router, server: server, configuration: .init(address: address, serverName: "sync-server"),
            services: services,
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// The work a server does besides answering: compacting history, closing push sockets when
    /// it stops.
    public static func backgroundServices(
        store: any RecordStore, pushHub: PushHub, configuration: SyncServerConfiguration, logger: Logger
    ) -> [any Service] {
        [
            HistoryCompactionService(store: store, configuration: configuration, logger: logger)
        ]
    }

    /// Closes the push sockets, each with its reason, when the server stops gracefully. It goes in
    /// the outermost service group after the listeners: a group stops its services in reverse order,
    /// one after another, so the sockets say why they close before a listener closes them without a word.
    public static func pushShutdown(_ pushHub: PushHub) -> any Service {
        PushShutdownService(pushHub: pushHub)
    }
}

extension SyncServerApplication {
    /// The push hub for a server on `store`, and the services it needs: on PostgreSQL, where several
    /// instances may serve one database, a relay that carries notices between them (over several
    /// clusters, on the main one, which every instance reaches).
    public static func push(for store: any RecordStore, logger: Logger) async -> (hub: PushHub, services: [any Service])
    {
        let hub = PushHub()
        // Over several clusters, every instance listens on the main one.
        guard let store = (store as? ClusteredRecordStore)?.main ?? store as? PostgresRecordStore else {
            return (hub, [])
        }
        let relay = PostgresPushRelay(store: store, hub: hub, logger: logger)
        await hub.fanOut(to: relay)
        return (hub, [relay])
    }
}

/// Closes the push sockets when the server shuts down gracefully: open WebSockets would otherwise
/// keep the server waiting for them forever. It waits (5 seconds at most) for each socket to send
/// its close frame, 1001 with the reason, before the listeners are told to stop: they would close
/// them too, with 1000 and no reason (see ``SyncServerApplication/pushShutdown(_:)``).
struct PushShutdownService: Service {
    let pushHub: PushHub

    func run() async throws {
        try? await gracefulShutdown()
        await pushHub.closeAll()
        let deadline = ContinuousClock.now + .seconds(5)
        while await pushHub.runningSocketCount > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// Periodically forgets old tombstones, replay answers and ended sessions, and collects assets no record names.
struct HistoryCompactionService: Service {
    let store: any RecordStore
    let configuration: SyncServerConfiguration
    let logger: Logger

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown {
                    try await Task.sleep(for: configuration.compactionInterval)
                }
            } catch {
                return
            }
            let now = Date()
            do {
                let removed = try await store.compactHistory(
                    tombstonesBefore: now.addingTimeInterval(-configuration.tombstoneRetention.seconds),
                    requestsBefore: now.addingTimeInterval(-configuration.requestReplayRetention.seconds))
                logger.info("compacted history", metadata: ["tombstonesRemoved": "\(removed)"])
            } catch {
                logger.error("history compaction failed", metadata: ["error": "\(error)"])
            }
            do {
                // Assets whose record went are kept as long as its tombstone; uploads no record names, a day.
                let collected = try await store.collectAssets(
                    detachedBefore: now.addingTimeInterval(-configuration.tombstoneRetention.seconds),
                    uploadsBefore: now.addingTimeInterval(-configuration.assetUploadLifetime.seconds), now: now)
                logger.info(
                    "collected assets", metadata: ["assets": "\(collected.assets)", "bytes": "\(collected.bytes)"])
            } catch {
                logger.error("collecting assets failed", metadata: ["error": "\(error)"])
            }
            do {
                // Sessions past either lifetime are told so (sessionExpired) for one more sliding
                // lifetime; then their traces go too.
                let now = configuration.clock.now()
                let expired = try await store.expireSessions(
                    lastUsedBefore: now.addingTimeInterval(-configuration.sessionLifetime.seconds),
                    createdBefore: now.addingTimeInterval(-configuration.sessionMaxLifetime.seconds), at: now)
                let forgotten = try await store.forgetEndedSessions(
                    endedBefore: now.addingTimeInterval(-configuration.sessionLifetime.seconds))
                logger.info(
                    "ended expired sessions", metadata: ["sessionsExpired": "\(expired)", "forgotten": "\(forgotten)"])
            } catch {
                logger.error("forgetting ended sessions failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
