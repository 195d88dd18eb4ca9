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

        /// The bearer token to send now, signing in first when the store does that by itself.
        package func token() async throws -> String? {
            switch self {
            case .token(let token): token
            case .none: nil
            case .store(let store): try await store.tokenSigningInIfNeeded()
            }
        }
    }

    /// The server's base URL, such as `http://127.0.0.1:8080`.
    public var serverURL: URL
    public var credentials: Credentials
    public var scope: DatabaseScope
    /// Names this device to the server, so that its own changes are not pushed back to it.
    public var deviceID: String?
    /// Opens and seals `encryptedValues`; without one, records holding them cannot be read or saved.
    public var keyring: Keyring?
    /// The record types whose values are always sealed: a fetched one that fails the checks is reported as
    /// `recordTampered`, never handed over as data, and one saved with a plain value where a sealed one
    /// belongs is refused before it leaves (see ``SealedRecordTypes``).
    public var sealedRecordTypes: SealedRecordTypes
    /// Where downloaded assets are kept (``fetchAssetContent(_:of:)``).
    public var assetCache: AssetCache

    public init(
        serverURL: URL, credentials: Credentials, scope: DatabaseScope = .private, deviceID: String? = nil,
        keyring: Keyring? = nil, sealedRecordTypes: SealedRecordTypes = .none, assetCache: AssetCache = .default
    ) {
        self.serverURL = serverURL
        self.credentials = credentials
        self.scope = scope
        self.deviceID = deviceID
        self.keyring = keyring
        self.sealedRecordTypes = sealedRecordTypes
        self.assetCache = assetCache
    }
}
