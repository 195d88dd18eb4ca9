import Foundation
import SyncClient
import SyncCore
import SyncKit
import Synchronization

/// Whether the device's server is new enough for this app: asked once per opened device, said once.
extension ContactsDevice {
    /// What this app needs of its server: contact photos (assets) and books shared with a key for
    /// each person (account key pairs) came with sync-server 0.3.0.
    public static let serverRequirement = ServerRequirement(
        minimumVersion: ReleaseVersion(0, 3, 0), features: "contact photos and sharing books with a key for each person"
    )

    /// Asks the server's version the first time it is called on this device object; an older server's
    /// warning goes to ``DeviceStatus/serverWarning`` and to the event log. A server that does not
    /// answer is the sync's to report, not this check's.
    func checkServerVersionOnce() async {
        guard
            serverVersionChecked.withLock({ checked in
                defer { checked = true }
                return !checked
            })
        else { return }
        guard let warning = try? await Self.serverRequirement.warning(forServerAt: options.serverURL) else { return }
        statusBroadcast.update { $0.serverWarning = warning }
        announce(.failure(warning, date: Date()))
    }
}
