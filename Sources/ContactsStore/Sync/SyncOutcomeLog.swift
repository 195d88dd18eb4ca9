import ContactsModel
import Foundation
import SyncCore
import SyncKit

/// Turns the engine's events and its scheduler's statuses into one line per send or fetch outcome.
///
/// The engine's `didSendChanges` ends every send, failed or not (as with CKSyncEngine), so it cannot say
/// "done"; the scheduler learns each outcome, scheduled or manual, right after it. So a run that began
/// (`willSendChanges`) is counted here, and the scheduler's next success or failure for that work says how it
/// ended: "send done" or "send failed: …", once. A send with nothing to send never began and logs nothing; a
/// failure before anything began (the server did not answer the account check) is still logged.
struct SyncOutcomeLog: Sendable {
    /// One line for the event log.
    struct Line: Sendable, Equatable {
        var text: String
        var isError: Bool
    }

    /// Whose sends and fetches these are, said before each line ("shared books"); nil for the device's own.
    var subject: String?
    /// Runs that began and whose outcome has not been logged yet, per work.
    private var begun: [SyncScheduler.Work: Int] = [:]
    private var lastSuccess: Date?
    private var lastFailure: SyncScheduler.Failure?

    /// The log of the engine of `scope`'s database: the shared books' lines say whose they are.
    static func of(_ scope: DatabaseScope) -> SyncOutcomeLog {
        SyncOutcomeLog(subject: scope == .shared ? "shared books" : nil)
    }

    /// A send or fetch began (`willSendChanges`, `willFetchChanges`).
    mutating func began(_ work: SyncScheduler.Work) {
        begun[work, default: 0] += 1
    }

    /// The lines a new scheduler status adds: the outcome it records, if it records one.
    mutating func lines(for status: SyncScheduler.Status) -> [Line] {
        var lines: [Line] = []
        if let failure = status.lastFailure, failure != lastFailure {
            lines.append(Line(text: said("\(failure.work) failed: \(failure.message)"), isError: true))
            settle(failure.work)
        }
        if let success = status.lastSuccess, success != lastSuccess, let work = status.lastSuccessWork,
            settle(work)
        {
            lines.append(Line(text: said("\(work) done"), isError: false))
        }
        lastFailure = status.lastFailure
        lastSuccess = status.lastSuccess
        return lines
    }

    private func said(_ text: String) -> String { subject.map { "\($0): \(text)" } ?? text }

    /// Takes one begun run of `work` off the count; whether there was one.
    @discardableResult
    private mutating func settle(_ work: SyncScheduler.Work) -> Bool {
        guard let count = begun[work], count > 0 else { return false }
        begun[work] = count - 1
        return true
    }
}
