import Foundation
import Synchronization

/// Holds the account an app is signed in with, shared by its engines (private and shared).
///
/// Setting a token signs in (or switches accounts); setting nil signs out. Engines with
/// `automaticallySync` react at once: they check the account, emit `accountChange`, and sync.
public final class CredentialStore: Sendable, Hashable {
    private struct Contents {
        var token: String?
        var observers: [UUID: AsyncStream<Void>.Continuation] = [:]
    }

    private let contents: Mutex<Contents>
    /// Opens a session when none is held, for stores that sign in by themselves (a ``Container``
    /// configured with an account name and password).
    private let signIn: (@Sendable () async throws -> String)?

    public init(token: String? = nil) {
        contents = Mutex(Contents(token: token))
        signIn = nil
    }

    /// A store that signs in by itself, with `signIn`, the first time a token is needed.
    public init(signIn: @escaping @Sendable () async throws -> String) {
        contents = Mutex(Contents(token: nil))
        self.signIn = signIn
    }

    /// The token to send now: the one held, or, for a store that signs in by itself, a new one.
    package func tokenSigningInIfNeeded() async throws -> String? {
        if let token { return token }
        guard let signIn else { return nil }
        let token = try await signIn()
        self.token = token
        return token
    }

    /// The bearer token the engines send, or nil when signed out.
    public var token: String? {
        get { contents.withLock { $0.token } }
        set {
            let observers = contents.withLock { contents -> [AsyncStream<Void>.Continuation] in
                guard contents.token != newValue else { return [] }
                contents.token = newValue
                return Array(contents.observers.values)
            }
            for observer in observers { observer.yield() }
        }
    }

    /// One element each time the token changes, until the returned stream is dropped.
    package func changes() -> AsyncStream<Void> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in
            _ = self?.contents.withLock { $0.observers.removeValue(forKey: id) }
        }
        contents.withLock { $0.observers[id] = continuation }
        return stream
    }

    public static func == (lhs: CredentialStore, rhs: CredentialStore) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
