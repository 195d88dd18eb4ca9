import Foundation
import SyncCore
import SyncCrypto

/// An app's data on a sync server: the counterpart of `CKContainer`, with its private and shared
/// databases and its account.
///
/// `Container(identifier:)` finds its server and account without code changes, so that code
/// written for CloudKit keeps its `Container(identifier: "iCloud.com.example.App")` line: see
/// ``ContainerConfiguration`` for the environment variables and the configuration file it reads.
/// ``init(identifier:serverURL:credentials:deviceID:)`` takes them in code instead.
public final class Container: Sendable {
    /// The identifier the container was created with.
    public let containerIdentifier: String?
    /// The server's base URL, such as `http://127.0.0.1:8080`.
    public let serverURL: URL
    /// How the container's databases sign in.
    public let credentials: Database.Credentials
    /// Names this device to the server, so that its own changes are not pushed back to it.
    public let deviceID: String?
    /// Opens and seals the databases' `encryptedValues`; `nil` without a passphrase.
    public let keyring: Keyring?
    /// The record types whose values are always sealed, in both databases (see ``SealedRecordTypes``).
    public let sealedRecordTypes: SealedRecordTypes
    /// Why the container has no account, when its configuration gave none: said by every error.
    private let configurationProblem: String?

    /// A container whose server and account come from the environment or the configuration file
    /// (``ContainerConfiguration/load(identifier:)``). Without a configuration every request fails
    /// with `notAuthenticated`, naming what to set.
    /// `sealedRecordTypes` declares the record types whose values are always sealed.
    public convenience init(identifier: String, sealedRecordTypes: SealedRecordTypes = .none) {
        self.init(
            identifier: identifier, environment: ProcessInfo.processInfo.environment,
            sealedRecordTypes: sealedRecordTypes)
    }

    /// A container configured from `environment` (and the configuration file it names).
    package convenience init(
        identifier: String, environment: [String: String], sealedRecordTypes: SealedRecordTypes = .none
    ) {
        do {
            let configuration = try ContainerConfiguration.load(identifier: identifier, environment: environment)
            self.init(identifier: identifier, configuration: configuration, sealedRecordTypes: sealedRecordTypes)
        } catch {
            // Every request says what to set, rather than the container acting signed out.
            let problem = "\(error)"
            self.init(
                identifier: identifier, serverURL: URL(fileURLWithPath: "/"),
                credentials: .store(CredentialStore { throw SyncError(.notAuthenticated, problem) }), deviceID: nil,
                keyring: nil, sealedRecordTypes: sealedRecordTypes, problem: problem)
        }
    }

    /// A container on `serverURL`, signing in with `credentials`; `sealedRecordTypes` declares the record
    /// types whose values are always sealed.
    public convenience init(
        identifier: String, serverURL: URL, credentials: Database.Credentials, deviceID: String? = nil,
        keyring: Keyring? = nil, sealedRecordTypes: SealedRecordTypes = .none
    ) {
        self.init(
            identifier: identifier, serverURL: serverURL, credentials: credentials, deviceID: deviceID,
            keyring: keyring, sealedRecordTypes: sealedRecordTypes, problem: nil)
    }

    /// A container set up by `configuration`; `sealedRecordTypes` declares the record types whose values are
    /// always sealed; `keyDerivation` is how a new account's key is derived from the passphrase (a test or
    /// a preview may pass cheaper parameters than the default).
    public convenience init(
        identifier: String, configuration: ContainerConfiguration, sealedRecordTypes: SealedRecordTypes = .none,
        keyDerivation: ScryptParameters = .default
    ) {
        let accounts = AccountClient(serverURL: configuration.serverURL)
        let store = CredentialStore { [configuration] in
            do {
                return try await accounts.signIn(username: configuration.username, password: configuration.password)
                    .token
            } catch let error as SyncError where configuration.signUp && error.code == .notAuthenticated {
                do {
                    return try await accounts.signUp(
                        username: configuration.username, password: configuration.password
                    ).token
                } catch let error as SyncError where error.code == .constraintViolation {
                    // Another device of the same person signed up between the two: sign in to that account.
                    return try await accounts.signIn(username: configuration.username, password: configuration.password)
                        .token
                }
            }
        }
        self.init(
            identifier: identifier, serverURL: configuration.serverURL, credentials: .store(store), deviceID: nil,
            keyring: configuration.passphrase.map { Keyring(passphrase: $0, parameters: keyDerivation) },
            sealedRecordTypes: sealedRecordTypes,
            problem: nil)
    }

    private init(
        identifier: String, serverURL: URL, credentials: Database.Credentials, deviceID: String?, keyring: Keyring?,
        sealedRecordTypes: SealedRecordTypes, problem: String?
    ) {
        containerIdentifier = identifier
        self.serverURL = serverURL
        self.credentials = credentials
        self.deviceID = deviceID
        self.keyring = keyring
        self.sealedRecordTypes = sealedRecordTypes
        configurationProblem = problem
    }

    /// The signed-in user's own data.
    public var privateCloudDatabase: Database { database(.private) }

    /// The data other users share with the signed-in user.
    public var sharedCloudDatabase: Database { database(.shared) }

    /// The database with `scope` (`CKContainer.database(with:)`).
    public func database(with scope: DatabaseScope) -> Database { database(scope) }

    private func database(_ scope: DatabaseScope) -> Database {
        Database(
            serverURL: serverURL, credentials: credentials, scope: scope, deviceID: deviceID, keyring: keyring,
            sealedRecordTypes: sealedRecordTypes)
    }

    /// Deletes the account's encrypted data, for when its passphrase is lost: every zone holding
    /// encrypted values goes (other devices' engines report the deletions with reason
    /// `encryptedDataReset`, and re-upload what they hold), and so do the account's encryption
    /// settings; the next encrypted save sets the account up again with this container's passphrase.
    public func resetEncryptedData() async throws {
        if let configurationProblem { throw SyncError(.notAuthenticated, configurationProblem) }
        try await DatabaseClient(database: privateCloudDatabase).resetEncryption()
        keyring?.forget()
    }

    /// Whether an account is signed in (`CKContainer.accountStatus()`).
    public func accountStatus() async throws -> AccountStatus {
        if configurationProblem != nil { return .noAccount }
        do {
            _ = try await DatabaseClient(database: privateCloudDatabase).account()
            return .available
        } catch let error as SyncError where error.code == .notAuthenticated {
            return .noAccount
        } catch let error as SyncError where error.code == .accountTemporarilyUnavailable {
            return .temporarilyUnavailable
        }
    }

    /// The signed-in user's record ID (`CKContainer.userRecordID()`).
    public func userRecordID() async throws -> Record.ID {
        if let configurationProblem { throw SyncError(.notAuthenticated, configurationProblem) }
        let account = try await DatabaseClient(database: privateCloudDatabase).account()
        return Record.ID(userRecordName: account.userRecordName)
    }
}

/// Whether a container has an account to use (`CKAccountStatus`).
public enum AccountStatus: Sendable, Hashable {
    case couldNotDetermine
    case available
    case restricted
    case noAccount
    case temporarilyUnavailable
}
