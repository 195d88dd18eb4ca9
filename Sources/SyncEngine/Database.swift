import Foundation
import SyncCore
import Synchronization

/// A database on a sync server: the counterpart of `CKDatabase`, naming where an engine syncs.
///
/// One engine per database: a private and a shared engine for the same account are two engines.
public struct Database: Sendable, Hashable {
    /// How the engine signs in.
    public enum Credentials: Sendable, Hashable {
        /// A bearer token from `POST /v1/sessions`, fixed for the engine's life.
        case token(String)
        /// Not signed in: the engine stays dormant.
        case none
        /// Whatever token the store holds now. When the app signs in, out or switches accounts
        /// through the store, engines using it notice by themselves: the counterpart of the
        /// system account CKSyncEngine watches.
        case store(CredentialStore)

        /// The bearer token to send now, if any.
        public var currentToken: String? {
            switch self {
            case .token(let token): token
            case .none: nil
            case .store(let store): store.token
            }
        }
    }

    /// The server's base URL, such as `http://127.0.0.1:8080`.
    public var serverURL: URL
    public var credentials: Credentials
    public var scope: DatabaseScope
    /// Names this device to the server, so that its own changes are not pushed back to it.
    public var deviceID: String?

    public init(serverURL: URL, credentials: Credentials, scope: DatabaseScope = .private, deviceID: String? = nil) {
        self.serverURL = serverURL
        self.credentials = credentials
        self.scope = scope
        self.deviceID = deviceID
    }
}

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

    public init(token: String? = nil) {
        contents = Mutex(Contents(token: token))
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
    func changes() -> AsyncStream<Void> {
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
