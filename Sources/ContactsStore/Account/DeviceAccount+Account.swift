import ContactsModel
import Foundation
import SyncCore
import SyncCrypto
import SyncKit

/// The account: signing up, in and out, the passphrase, and deleting data here or on the server.
extension DeviceAccount {
    /// The passphrase that opens the account's encrypted contacts, when this device has it.
    public func passphrase() throws -> String? {
        try store.setting(.passphrase)
    }

    /// Creates an account on the server and signs this device in to it. `passphrase` encrypts the
    /// account's contacts; the server never sees it. Returns the account's recovery key, made now, to show
    /// the person once (nil when the server could not keep one: the account works without it).
    @discardableResult
    public func signUp(username: String, password: String, passphrase: String) async throws -> RecoveryKey? {
        let session = try await AccountClient(serverURL: options.serverURL).signUp(
            username: username, password: password, deviceLabel: sessionLabel)
        try await adopt(session: session, username: username, passphrase: passphrase)
        return try? await setUpRecoveryKey()
    }

    /// Signs this device in. A `passphrase` that does not open the account's encrypted contacts ends the
    /// new session and throws, changing nothing here.
    public func signIn(username: String, password: String, passphrase: String) async throws {
        let session = try await AccountClient(serverURL: options.serverURL).signIn(
            username: username, password: password, deviceLabel: sessionLabel)
        try await adopt(session: session, username: username, passphrase: passphrase)
    }

    /// Gives a signed-in device the account's passphrase (a device of an earlier version has none),
    /// once the server's settings show that it opens the account.
    public func setPassphrase(_ passphrase: String) async throws {
        let token = try signedInToken()
        try await unlock(passphrase, token: token)
        try store.setSetting(.passphrase, passphrase)
        await replaceEngine()
    }

    func adopt(session: SessionInfo, username: String, passphrase: String) async throws {
        do {
            try await unlock(passphrase, token: session.token)
        } catch {
            try? await AccountClient(serverURL: options.serverURL).signOut(token: session.token)
            throw error
        }
        let previousUser = try store.setting(.userRecordName)
        try write { transaction in
            // Contacts kept from a signed-out account are that account's: they never go to another one.
            if let previousUser, previousUser != session.userRecordName { try transaction.wipe(engineState: true) }
            try ContactStore.setSetting(.token, session.token, transaction.db)
            try ContactStore.setSetting(.username, username, transaction.db)
            try ContactStore.setSetting(.userRecordName, session.userRecordName, transaction.db)
            try ContactStore.setSetting(.passphrase, passphrase, transaction.db)
        }
        credentials.token = session.token
        await replaceEngine()
        announce(.accountChanged)
    }

    /// Checks that `passphrase` opens the account (creating its encryption settings when it has none).
    private func unlock(_ passphrase: String, token: String) async throws {
        let database = Database(serverURL: options.serverURL, credentials: .token(token))
        do {
            try await keyring(passphrase).unlock(for: database)
        } catch let error as SyncError where error.code == .notAuthenticated {
            throw DeviceError.wrongPassphrase
        }
    }

    /// Deletes the account's encrypted data on the server (a lost passphrase), makes `passphrase` the
    /// account's new one, and uploads this device's contacts again, encrypted with it. Other devices see
    /// their zones deleted with reason `encryptedDataReset` and need the new passphrase.
    public func resetEncryptedData(passphrase: String) async throws {
        let token = try signedInToken()
        try await Container(identifier: "contacts", serverURL: options.serverURL, credentials: .token(token))
            .resetEncryptedData()
        try await unlock(passphrase, token: token)
        try store.setSetting(.passphrase, passphrase)
        await replaceEngine()
        try await sync()
    }

    /// Signs out: ends the session on the server (when reachable) and removes every secret of the account from
    /// this device's file: the session token, the passphrase and the account key derived from it (zone keys and
    /// the sharing key are only ever held in memory, by the engines' keyring, which goes with them). The file is
    /// then rewritten (`VACUUM`) so that no copy of them is left in its free pages or its write-ahead log.
    ///
    /// Contacts and changes not yet sent stay: signing in again to the same account sends them. Signing in to
    /// another account removes them first (``adopt(session:username:passphrase:)``), as a switch of account does.
    public func signOut() async throws {
        if let token = credentials.token {
            try? await AccountClient(serverURL: options.serverURL).signOut(token: token)
        }
        try write { transaction in
            for setting: Setting in [.token, .passphrase, .derivedAccountKey] {
                try ContactStore.setSetting(setting, nil, transaction.db)
            }
        }
        credentials.token = nil
        try store.eraseFreedSpace()
        // New engines without a keyring; they see no account, and stay dormant until the next sign-in.
        await replaceEngine()
        for engine in engines { try? await engine.fetchChanges() }
        announce(.accountChanged)
    }

    // MARK: Deleting

    /// Removes this device's contacts and sync state; the server keeps its copy, and the next
    /// fetch downloads everything again.
    public func deleteLocalData() async throws {
        await cancelEngines()
        // The engines are replaced, not told: the new ones start from an empty state and outbox.
        try store.write { transaction in try transaction.wipe(engineState: true) }
        try makeEngines(states: (nil, nil))
        announce(.contactsChanged)
    }

    /// Deletes the zones of the person's books on the server, which removes their contacts on every
    /// device (this one too, once the server confirms) and from everyone they are shared with.
    public func deleteServerData() async throws {
        try write { transaction in
            let own = try ContactStore.books(transaction.db).filter(\.isOwn).map(\.zoneID)
            try transaction.wipe(engineState: false)
            for zoneID in Set(own + [Contact.zoneID]) { try transaction.enqueue(.zone(.deleteZone(zoneID))) }
        }
        announce(.contactsChanged)
        try await engine.sendChanges()
    }
}
