import ContactsModel
import Foundation
import SyncCore
import SyncKit

/// The account's sessions and lifecycle, as this device asks the server: the password, the devices signed
/// in, and deleting the account.
extension DeviceAccount {
    /// Changes the account's password. Every other session of the account ends (their devices say they were
    /// signed out and keep their data); this device stays signed in.
    public func changePassword(from oldPassword: String, to newPassword: String) async throws {
        try await AccountClient(serverURL: options.serverURL).changePassword(
            token: try signedInToken(), oldPassword: oldPassword, newPassword: newPassword)
    }

    /// The sessions signed in to the account, newest first; this device's is marked current.
    public func sessions() async throws -> [SessionDescription] {
        try await AccountClient(serverURL: options.serverURL).sessions(token: try signedInToken())
    }

    /// Ends the session `id` (another device's, usually: its next request is refused and it says so).
    public func endSession(id: String) async throws {
        try await AccountClient(serverURL: options.serverURL).endSession(token: try signedInToken(), id: id)
    }

    /// Ends every session of the account but this device's; returns how many ended.
    public func endOtherSessions() async throws -> Int {
        try await AccountClient(serverURL: options.serverURL).endOtherSessions(token: try signedInToken())
    }

    /// Deletes the account on the server (its books, contacts, shares and sessions), then forgets it here as
    /// sign-out does: the token, passphrase and keys leave this device's file; its contacts stay on it.
    public func deleteAccount(password: String) async throws {
        try await AccountClient(serverURL: options.serverURL).deleteAccount(
            token: try signedInToken(), password: password)
        try await signOut()
    }

    /// What this device calls itself in the account's session list: "laptop on hostname".
    var sessionLabel: String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? ""
        return String((host.isEmpty ? name : "\(name) on \(host)").prefix(100))
    }
}
