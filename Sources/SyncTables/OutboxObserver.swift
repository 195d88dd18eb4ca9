import Foundation
import GRDB

/// Follows the commits of the layer's connection that leave changes for the outbox, without touching the
/// app's statements: GRDB asks its observers about every statement it runs, and hands one that observes
/// the table the triggers append to each row they append. This one observes only the layer's own outbox
/// (`synctables_pending`), and after each commit asks whether `synctables_changes` holds a change, which is
/// one step into a table.
final class OutboxObserver: TransactionObserver, @unchecked Sendable {
    // Touched only on the database's writer, where GRDB calls its observers, and set before it is added.
    private var outboxChanged = false
    /// Called after a commit that appended changes or changed the outbox.
    var onChange: @Sendable (Database) -> Void = { _ in }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        eventKind.tableName == "synctables_pending"
    }

    func databaseDidChange(with event: DatabaseEvent) {
        outboxChanged = true
        stopObservingDatabaseChangesUntilNextTransaction()
    }

    func databaseDidCommit(_ db: Database) {
        let appended = (try? Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM synctables_changes)")) ?? true
        guard appended || outboxChanged else { return }
        outboxChanged = false
        onChange(db)
    }

    func databaseDidRollback(_ db: Database) {
        outboxChanged = false
    }
}
