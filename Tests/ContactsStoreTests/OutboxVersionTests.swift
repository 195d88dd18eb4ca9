import ContactsTesting
import Foundation
import SyncCore
import SyncKit
import SyncTesting
import Testing

@testable import ContactsModel
@testable import ContactsStore

/// One outbox entry an item, one version past the last at each change queued: a confirmation of an older
/// version leaves a newer change queued.
@Suite("Contacts: the outbox's versions")
struct OutboxVersionTests {
    @Test("queued again, an entry takes the next version and the newer kind; a settle of an older one leaves it")
    func versions() async throws {
        try await withTemporaryDirectory { directory in
            let store = try ContactStore(path: directory + "/device.sqlite")
            let ada = Contact(name: "Ada Lovelace")
            let bob = Contact(name: "Bob Byte")
            let save = OutboxEntry.Change.record(.saveRecord(ada.recordID))
            let delete = OutboxEntry.Change.record(.deleteRecord(ada.recordID))
            func entries() throws -> [String] {
                try store.outbox().map { entry in
                    let name = entry.key == OutboxEntry(change: save).key ? "ada" : "bob"
                    return "\(name) \(entry.kind) \(entry.version)"
                }.sorted()
            }

            try store.write { transaction in
                try transaction.enqueue(save)
                try transaction.enqueue(.record(.saveRecord(bob.recordID)))
                try transaction.enqueue(save)
            }
            #expect(try entries() == ["ada save 2", "bob save 1"])

            try store.write { transaction in try transaction.settle(save, version: 1) }
            #expect(try entries() == ["ada save 2", "bob save 1"], "an edit made while version 1 was sent stays")

            try store.write { transaction in try transaction.enqueue(delete) }
            #expect(try entries() == ["ada delete 3", "bob save 1"])
            try store.write { transaction in try transaction.settle(save, version: 3) }
            #expect(try entries() == ["ada delete 3", "bob save 1"], "a save confirmed does not settle the delete")

            try store.write { transaction in try transaction.settle(delete, version: 3) }
            #expect(try entries() == ["bob save 1"])
            try store.write { transaction in try transaction.enqueue(save) }
            #expect(try entries() == ["ada save 1", "bob save 1"], "a settled item starts again at 1")
        }
    }
}
