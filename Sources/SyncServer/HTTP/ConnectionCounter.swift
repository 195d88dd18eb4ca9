import Synchronization

/// The connections open on one server, in all and per client address, shared by every
/// connection's ``ConnectionGuard`` (they run on different event loops, hence the lock).
final class ConnectionCounter: Sendable {
    /// Why a connection was not admitted.
    enum Refusal: Equatable, CustomStringConvertible {
        case serverFull(limit: Int)
        case addressFull(limit: Int)

        var description: String {
            switch self {
            case .serverFull(let limit): "the server has \(limit) connections open, its limit"
            case .addressFull(let limit): "this address has \(limit) connections open, its limit"
            }
        }
    }

    private struct Counts {
        var total = 0
        var perAddress: [String: Int] = [:]
    }

    let maximum: Int
    let maximumPerAddress: Int
    private let counts = Mutex(Counts())

    init(maximum: Int, maximumPerAddress: Int) {
        self.maximum = maximum
        self.maximumPerAddress = maximumPerAddress
    }

    /// Counts a new connection from `address`, or says why it is over a limit (and counts nothing).
    func admit(from address: String) -> Refusal? {
        counts.withLock { counts in
            if counts.total >= maximum { return .serverFull(limit: maximum) }
            let fromAddress = counts.perAddress[address, default: 0]
            if fromAddress >= maximumPerAddress { return .addressFull(limit: maximumPerAddress) }
            counts.total += 1
            counts.perAddress[address] = fromAddress + 1
            return nil
        }
    }

    /// Forgets a connection ``admit(from:)`` counted.
    func release(from address: String) {
        counts.withLock { counts in
            counts.total = max(0, counts.total - 1)
            let remaining = counts.perAddress[address, default: 0] - 1
            // Addresses with no connection are forgotten, so the table stays as small as what is open.
            counts.perAddress[address] = remaining > 0 ? remaining : nil
        }
    }

    /// How many connections are open in all.
    var openConnections: Int { counts.withLock { $0.total } }
}
