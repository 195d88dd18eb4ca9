import Synchronization

/// What went wrong during a soak, by kind, with the first few messages to show; and the conflicts,
/// which are not errors (two devices edited one contact at once) but are worth counting.
final class SoakErrors: Sendable {
    enum Kind: String, CaseIterable {
        case failedSave = "failed saves"
        case failedDelete = "failed deletes"
        case failedFetch = "failed fetches"
        case engine = "engine errors"
        case socketDrop = "socket drops"
    }

    private struct Storage {
        var counts: [Kind: Int] = [:]
        var examples: [String] = []
        var conflicts = 0
        var stopping = false
    }

    private let storage = Mutex(Storage())
    /// How many messages are kept to print.
    private static let examplesKept = 12

    func add(_ kind: Kind, _ message: @autoclosure () -> String) {
        storage.withLock { storage in
            // Sockets and engines stopped at the end are not errors.
            guard !storage.stopping || kind != .socketDrop else { return }
            storage.counts[kind, default: 0] += 1
            if storage.examples.count < Self.examplesKept { storage.examples.append("\(kind.rawValue): \(message())") }
        }
    }

    func addConflict() {
        storage.withLock { $0.conflicts += 1 }
    }

    /// From now on, closed sockets are the benchmark's own doing.
    func stop() {
        storage.withLock { $0.stopping = true }
    }

    var total: Int { storage.withLock { $0.counts.values.reduce(0, +) } }
    var conflicts: Int { storage.withLock { $0.conflicts } }
    var examples: [String] { storage.withLock { $0.examples } }

    /// "failed saves 2, socket drops 1", or "none".
    var summary: String {
        let counts = storage.withLock { $0.counts }
        let parts = Kind.allCases.compactMap { kind in counts[kind].map { "\(kind.rawValue) \($0)" } }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }
}
