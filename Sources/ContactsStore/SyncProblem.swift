import ContactsModel
import SyncCore

/// A sync failure in words a person can act on, where the server's own message is not enough: a session
/// the server ended for good, or an account whose storage is full. The full-screen app and the CLI both
/// show these (the CLI adds its own commands).
public enum SyncProblem {
    /// The words for a failure; `message` (the server's) when nothing more is known.
    public static func describe(
        code: SyncError.Code?, reason: SyncError.Reason?, quota: StorageUsage?, message: String
    ) -> String {
        switch reason {
        case .sessionEnded?:
            return
                "signed out: this session was ended on another device. Contacts and pending changes stay on this device; sign in again to send them"
        case .sessionExpired?:
            return
                "signed out: this session expired. Contacts and pending changes stay on this device; sign in again to send them"
        case .accountDeleted?:
            return "signed out: the account was deleted on the server. Contacts stay on this device"
        case .accountDisabled?:
            return
                "the server's operator disabled this account. Contacts and pending changes stay on this device; ask the operator"
        case .passphraseRejected?:
            // The device keeps only a passphrase it checked: one that no longer opens the account was
            // changed (or the encrypted data reset) on another device since.
            return
                "the passphrase was changed on another device: enter the new one here to sync. Contacts and pending changes stay on this device until then"
        default:
            break
        }
        if code == .quotaExceeded {
            let usage = quota.map { quota in
                " (" + bytes(quota.usedBytes) + (quota.limitBytes.map { " of " + bytes($0) } ?? "") + ")"
            }
            return
                "the server's storage for this account is full\(usage ?? ""); edits stay pending on this device and are sent once there is room: delete contacts you do not need, or ask the server's operator for more"
        }
        return message
    }

    /// The words for `error`.
    public static func describe(_ error: SyncError) -> String {
        describe(code: error.code, reason: error.reason, quota: error.quota, message: error.description)
    }

    /// The words for any error: a ``SyncError``'s as above, anything else as it describes itself.
    public static func describe(anyError error: any Error) -> String {
        (error as? SyncError).map(describe) ?? "\(error)"
    }

    /// Whether `error` means this device must sign in again to sync.
    public static func needsSignIn(_ error: SyncError) -> Bool {
        error.reason?.endsSession ?? false
    }

    /// Whether `error` means this device needs the account's new passphrase to sync.
    public static func needsPassphrase(_ error: SyncError) -> Bool {
        error.reason == .passphraseRejected
    }

    /// "812 KB", "12.4 MB", "1.0 GB": decimal units, as disks are sold.
    static func bytes(_ count: Int64) -> String {
        let units: [(String, Double)] = [("GB", 1e9), ("MB", 1e6), ("KB", 1e3)]
        for (unit, size) in units where Double(count) >= size {
            let value = Double(count) / size
            return (value >= 100 ? String(Int(value.rounded())) : String((value * 10).rounded() / 10)) + " " + unit
        }
        return "\(count) bytes"
    }
}
