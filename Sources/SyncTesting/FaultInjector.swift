import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SyncCore
import SyncServer
import Synchronization

/// Which faults to inject, and how often. Each fraction is a probability per request, from 0 to 1.
public struct FaultPlan: Sendable, Hashable {
    /// Answer `503 serviceUnavailable` with ``retryAfter``, without handling the request.
    public var serviceUnavailable: Double
    /// Answer `429 requestRateLimited` with ``retryAfter``, without handling the request.
    public var rateLimited: Double
    /// Close the connection without handling the request.
    public var dropRequest: Double
    /// Handle the request, then close the connection without answering: the change is applied
    /// but the client never hears so (retry with the same `clientRequestID` must be harmless).
    public var dropResponse: Double
    /// Stop the request's work with a `CancellationError` inside the server, the connection left open: as
    /// a request under way does when its database pool closes for a failover.
    public var cancelInside: Double
    /// The `retryAfter` sent with injected 503 and 429 answers, in seconds.
    public var retryAfter: Double
    /// Only requests whose path starts with this are affected.
    public var pathPrefix: String

    public init(
        serviceUnavailable: Double = 0, rateLimited: Double = 0, dropRequest: Double = 0, dropResponse: Double = 0,
        cancelInside: Double = 0, retryAfter: Double = 0.05, pathPrefix: String = Endpoint.databasePaths
    ) {
        self.serviceUnavailable = serviceUnavailable
        self.rateLimited = rateLimited
        self.dropRequest = dropRequest
        self.dropResponse = dropResponse
        self.cancelInside = cancelInside
        self.retryAfter = retryAfter
        self.pathPrefix = pathPrefix
    }

    /// No faults.
    public static let none = FaultPlan()

    /// A total failure rate split evenly between 503, 429, dropped requests and dropped responses.
    public static func mixed(failureRate: Double, retryAfter: Double = 0.05) -> FaultPlan {
        FaultPlan(
            serviceUnavailable: failureRate / 4, rateLimited: failureRate / 4, dropRequest: failureRate / 4,
            dropResponse: failureRate / 4, retryAfter: retryAfter)
    }
}

/// How many faults were injected so far.
public struct FaultCounts: Sendable, Hashable {
    public var requests = 0
    public var serviceUnavailable = 0
    public var rateLimited = 0
    public var droppedRequests = 0
    public var droppedResponses = 0
    public var cancelledInside = 0

    /// Every injected failure.
    public var failures: Int {
        serviceUnavailable + rateLimited + droppedRequests + droppedResponses + cancelledInside
    }
}

/// Injects faults into a test server's requests, following a ``FaultPlan`` that tests may change at any time,
/// and holds requests at the ``RequestGate``s a test closes.
///
/// Randomness is seeded, so a failing test fails the same way when run again.
public final class FaultInjector: Sendable {
    private struct State {
        var plan: FaultPlan
        var counts = FaultCounts()
        var random: SplitMix64
        var gates: [RequestGate] = []
        var requests: [String: Int] = [:]
    }

    private let state: Mutex<State>

    public init(plan: FaultPlan = .none, seed: UInt64 = 0x5EED) {
        state = Mutex(State(plan: plan, random: SplitMix64(seed: seed)))
    }

    /// The plan in force.
    public var plan: FaultPlan {
        get { state.withLock { $0.plan } }
        set { state.withLock { $0.plan = newValue } }
    }

    /// What was injected so far.
    public var counts: FaultCounts { state.withLock { $0.counts } }

    /// How many requests reached the server as `"METHOD /path"` (`"GET /v1/account"`), whatever the plan.
    public func requestCount(_ request: String) -> Int { state.withLock { $0.requests[request] ?? 0 } }

    /// Holds every later request whose path starts with `pathPrefix` (and whose method is `method`,
    /// if given) until the returned gate is opened. Any path can be gated, not only the plan's.
    public func closeGate(pathPrefix: String, method: RequestMethod? = nil) -> RequestGate {
        let gate = RequestGate(pathPrefix: pathPrefix, method: method)
        state.withLock { $0.gates.append(gate) }
        return gate
    }

    /// Opens every gate, letting every held request through.
    public func openAllGates() {
        let gates = state.withLock { state in
            defer { state.gates = [] }
            return state.gates
        }
        for gate in gates { gate.open() }
    }

    /// The closed gates a request meets.
    func gates(method: String, path: String) -> [RequestGate] {
        state.withLock { state in
            state.gates.removeAll { $0.isOpen }
            return state.gates.filter { $0.matches(method: method, path: path) }
        }
    }

    enum Fault {
        case serviceUnavailable(Double)
        case rateLimited(Double)
        case dropRequest
        case dropResponse
        case cancelInside
    }

    func arrived(_ request: String) {
        state.withLock { $0.requests[request, default: 0] += 1 }
    }

    /// Decides the fate of one request.
    func draw(path: String) -> Fault? {
        state.withLock { state in
            let plan = state.plan
            guard path.hasPrefix(plan.pathPrefix) else { return nil }
            state.counts.requests += 1
            let roll = state.random.nextUnit()
            var threshold = plan.serviceUnavailable
            if roll < threshold {
                state.counts.serviceUnavailable += 1
                return .serviceUnavailable(plan.retryAfter)
            }
            threshold += plan.rateLimited
            if roll < threshold {
                state.counts.rateLimited += 1
                return .rateLimited(plan.retryAfter)
            }
            threshold += plan.dropRequest
            if roll < threshold {
                state.counts.droppedRequests += 1
                return .dropRequest
            }
            threshold += plan.dropResponse
            if roll < threshold {
                state.counts.droppedResponses += 1
                return .dropResponse
            }
            threshold += plan.cancelInside
            if roll < threshold {
                state.counts.cancelledInside += 1
                return .cancelInside
            }
            return nil
        }
    }

    /// The middleware that applies the plan inside the server.
    public var middleware: FaultInjectionMiddleware { FaultInjectionMiddleware(injector: self) }
}

/// Server middleware that holds requests at a ``FaultInjector``'s closed gates, then applies its plan.
public struct FaultInjectionMiddleware: RouterMiddleware {
    let injector: FaultInjector

    public func handle(
        _ request: Request, context: SyncRequestContext,
        next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        let method = request.method.rawValue
        let path = request.uri.path
        injector.arrived(method + " " + path)
        for gate in injector.gates(method: method, path: path) {
            await gate.pass(method: method, path: path)
        }
        switch injector.draw(path: path) {
        case nil:
            return try await next(request, context)
        case .serviceUnavailable(let retryAfter):
            throw SyncError(
                .serviceUnavailable, "injected fault: the service is unavailable; retry later",
                retryAfter: retryAfter)
        case .rateLimited(let retryAfter):
            throw SyncError(.requestRateLimited, "injected fault: rate limited; retry later", retryAfter: retryAfter)
        case .dropRequest:
            try await context.channel.close()
            throw CancellationError()
        case .dropResponse:
            _ = try await next(request, context)
            try await context.channel.close()
            throw CancellationError()
        case .cancelInside:
            throw CancellationError()
        }
    }
}

/// A small, fast, seedable random generator (Steele, Lea and Flood's SplitMix64).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in [0, 1).
    mutating func nextUnit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}
