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
    /// warning goes to ``DeviceStatus/serverWarning`` and to the event log. A later call waits for that
    /// first check rather than returning before it ends, so that a command that syncs can say the warning
    /// after its sync. A server that does not answer is the sync's to report, not this check's.
    func checkServerVersionOnce() async {
        let check = serverVersionCheck.withLock { check in
            if let check { return check }
            let started = Task { [weak self, serverURL = options.serverURL, begun = options.serverVersionCheck] in
                guard let warning = await (begun ?? Self.beginServerVersionCheck(serverURL: serverURL)).value
                else { return }
                self?.statusBroadcast.update { $0.serverWarning = warning }
                self?.announce(.failure(warning, date: Date()))
            }
            check = started
            return started
        }
        await check.value
    }

    /// Asks the server at `serverURL` its version now, for a device about to open
    /// (``Options/serverVersionCheck``): the task's value is the warning to say, nil when the server is
    /// new enough or did not answer (which the sync reports).
    public static func beginServerVersionCheck(serverURL: URL) -> Task<String?, Never> {
        Task { (try? await serverRequirement.warning(forServerAt: serverURL)) ?? nil }
    }
}
