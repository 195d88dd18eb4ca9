import Foundation
import SyncCore

/// A database on a sync server: the counterpart of `CKDatabase`, naming where an engine syncs.
///
/// One engine per database: a private and a shared engine for the same account are two engines.
public struct Database: Sendable, Hashable {
    /// How the engine signs in.
    public enum Credentials: Sendable, Hashable {
        /// A bearer token from `POST /v1/sessions`.
        case token(String)
        /// Not signed in: the engine stays dormant until credentials arrive.
        case none
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
