import Synchronization

/// Holds a test server's matching requests before they are handled, until the test opens it: the
/// way a test makes "while a request is in flight" certain instead of sleeping and hoping.
///
/// ```swift
/// let gate = server.faults.closeGate(pathPrefix: "/v1/databases/private/records/modify")
/// async let sending: Void = engine.sendChanges()
/// try await gate.waitUntilHeld()  // the request is on the server, not yet handled
/// device.save(…)                  // an edit made while it is in flight
/// gate.open()
/// try await sending
/// ```
///
/// A request held when the server stops is let through first (``TestServer/stop()`` opens every
/// gate), so that a forgotten gate cannot hang a test's clean-up.
public final class RequestGate: Sendable {
    /// Requests whose path starts with this are held.
    public let pathPrefix: String
    /// Only requests with this method are held; any method when nil.
    public let method: RequestMethod?

    private struct State {
        var isOpen = false
        var held: [CheckedContinuation<Void, Never>] = []
        var arrivals: [String] = []
    }

    private let state = Mutex(State())

    init(pathPrefix: String, method: RequestMethod?) {
        self.pathPrefix = pathPrefix
        self.method = method
    }

    /// Whether the gate has been opened.
    public var isOpen: Bool { state.withLock { $0.isOpen } }

    /// How many requests the gate holds now.
    public var heldCount: Int { state.withLock { $0.held.count } }

    /// Every request that reached the gate while it was closed, as "METHOD /path", in order of arrival.
    public var arrivals: [String] { state.withLock { $0.arrivals } }

    /// Lets every held request through, and every later one.
    public func open() {
        let held = state.withLock { state in
            state.isOpen = true
            defer { state.held = [] }
            return state.held
        }
        for request in held { request.resume() }
    }

    /// Returns once the gate holds at least `count` requests; throws ``WaitTimeout`` after `timeout`,
    /// saying which requests arrived.
    public func waitUntilHeld(count: Int = 1, timeout: Duration = .seconds(60)) async throws {
        try await waitUntil("\(count) request(s) to \(pathPrefix) are held at the gate", timeout: timeout) {
            heldCount >= count
        } observed: {
            let arrivals = self.arrivals
            return "\(self.heldCount) held; arrived: \(arrivals.isEmpty ? "none" : arrivals.joined(separator: ", "))"
        }
    }

    func matches(method: String, path: String) -> Bool {
        path.hasPrefix(pathPrefix) && (self.method == nil || self.method?.rawValue == method)
    }

    /// Holds the calling request until the gate opens; returns at once if it is open.
    func pass(method: String, path: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isOpen = state.withLock { state in
                if state.isOpen { return true }
                state.arrivals.append("\(method) \(path)")
                state.held.append(continuation)
                return false
            }
            if isOpen { continuation.resume() }
        }
    }
}
