import ContactsModel
import ContactsTesting
import Foundation
import GRDB
import SyncTesting
import Testing

@testable import ContactsStore

/// Each command is a process that opens the device file and closes it. A small log stays for the next
/// command instead of being copied into the file, flushed and deleted at every close; a large one does not.
@Suite("Device files: the log between commands")
struct LogOnCloseTests {
    @Test("a small log stays when the store closes, and the next store reads every change back from it")
    func smallLogStays() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/device.sqlite"
            var fileBefore = 0
            do {
                let store = try ContactStore(path: path)
                fileBefore = fileBytes(path)
                try store.saveLocal([Contact(name: "Ada Lovelace"), Contact(name: "Grace Hopper")])
            }
            let kept = fileBytes(path + "-wal")
            #expect(kept > 0 && kept <= ContactStore.logKeptOnClose, "the log left: \(kept) bytes")
            #expect(fileBytes(path) == fileBefore, "closing copied the log into the file")

            let again = try ContactStore(path: path)
            #expect(Set(try again.contacts().map(\.name)) == ["Ada Lovelace", "Grace Hopper"])
            #expect(try again.count() == 2)
        }
    }

    @Test("a log over a mebibyte is copied into the file and cut to nothing when the store closes")
    func largeLogIsCheckpointed() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory + "/device.sqlite"
            let contacts = (0..<3000).map { index in
                Contact(name: "Person \(index)", emails: [.init(label: "home", value: "person\(index)@example.com")])
            }
            do {
                let store = try ContactStore(path: path)
                try store.saveLocal(contacts)
                #expect(store.logBytes > ContactStore.logKeptOnClose, "the import logged \(store.logBytes) bytes")
            }
            #expect(fileBytes(path + "-wal") == 0)

            let again = try ContactStore(path: path)
            #expect(try again.count() == 3000)
            #expect(try again.contact(contacts[2999].id)?.name == "Person 2999")
        }
    }
}
