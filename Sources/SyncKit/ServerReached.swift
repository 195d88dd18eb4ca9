import Synchronization

/// Whether a sync operation reached the server, told from inside ``SyncEngine/run(_:)``: one with no
/// account to send or fetch as did not, and is no success for the scheduler to count.
final class ServerReached: Sendable {
    private let value = Mutex(false)
    var server: Bool { value.withLock { $0 } }
    func record(_ reached: Bool) { value.withLock { $0 = reached } }
}
