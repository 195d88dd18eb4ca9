import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncCore
import SyncServer
import SyncTesting
import Synchronization
import Testing

/// Accounts spread over two PostgreSQL clusters (``ClusteredRecordStore``: the main database, which holds
/// the directory, and a second one), served by two instances: Ada lands on the main cluster and Grace
/// on the second, by the rule "fewest accounts".
@Suite("Contacts over two PostgreSQL clusters", .serialized)
struct ClusterTests {
    private struct People {
        var first: TestServer
        var second: TestServer
        var store: ClusteredRecordStore
        var ada: ContactsDevice
        /// On the second instance.
        var adaPhone: ContactsDevice
        /// Syncing by itself: it hears of changes by push, from either instance.
        var grace: ContactsDevice
    }

    /// Ada's laptop and Grace's device on the first instance (an invitation names the address its
    /// device syncs with), Ada's phone on the second; both instances on both clusters.
    private func withPeople(_ body: (People) async throws -> Void) async throws {
        try await TestServer.$backend.withValue(.postgres) {
            try await TestServer.$clusters.withValue(["second"]) {
                try await TestServer.with(transport: .loopback) { first in
                    let second = try await TestServer.start(storagePath: first.storagePath, transport: .loopback)
                    do {
                        try await withTemporaryDirectory { directory in
                            let ada = try openDevice("ada", directory: directory, server: first)
                            try await ada.account.signUp(
                                username: "ada", password: "correct horse battery", passphrase: testPassphrase)
                            let adaPhone = try openDevice("ada-phone", directory: directory, server: second)
                            try await adaPhone.account.signIn(
                                username: "ada", password: "correct horse battery", passphrase: testPassphrase)
                            let grace = try ContactsDevice(
                                .init(
                                    dataDirectory: directory, deviceName: "grace",
                                    serverURL: URL(string: first.baseURL)!, automaticallySync: true,
                                    keyDerivation: cheapKeyDerivation, holdsWorkUnderLoad: false))
                            try await grace.account.signUp(
                                username: "grace", password: "another good password", passphrase: "grace's own words")
                            let store = try #require(first.store as? ClusteredRecordStore)
                            #expect(try await store.cluster(ofUsername: "ada") == "main")
                            #expect(try await store.cluster(ofUsername: "grace") == "second")
                            try await body(
                                People(
                                    first: first, second: second, store: store, ada: ada, adaPhone: adaPhone,
                                    grace: grace))
                        }
                    } catch {
                        try? await second.stop()
                        throw error
                    }
                    try await second.stop()
                }
            }
        }
    }

    private func book(_ device: ContactsDevice, _ name: String) throws -> AddressBook {
        try device.store.resolveBook(name)
    }

    private func names(_ device: ContactsDevice, in book: String) throws -> [String] {
        try device.store.contacts(in: try self.book(device, book).zoneID).map(\.name)
    }

    private func photo(_ device: ContactsDevice, of name: String) async throws -> Data {
        try Data(contentsOf: try await device.contacts.photoFile(of: try device.contact(named: name).id))
    }

    @Test(
        "Ada (main cluster) and Grace (second cluster) share books both ways read-write: edits and photos flow both ways, and Grace hears of an edit made through the other instance by push"
    )
    func sharingAcrossClusters() async throws {
        try await withPeople { people in
            let (ada, adaPhone, grace) = (people.ada, people.adaPhone, people.grace)
            let mumPhoto = TestPhotos.image(20_000, seed: 11)
            let cousinPhoto = TestPhotos.image(15_000, seed: 12)
            let family = try ada.books.createBook(named: "Family")
            _ = try ada.interchange.importVCards(TestPhotos.card("Mum", v3: mumPhoto), into: family.zoneID)
            try await ada.sync()
            let invitation = try await ada.books.shareBook(family, with: "grace", readOnly: false)
            try await grace.books.acceptInvitation(invitation.description)
            #expect(try names(grace, in: "Family") == ["Mum"])
            #expect(try await photo(grace, of: "Mum") == mumPhoto, "Ada's photo reaches Grace's cluster's device")

            // Grace writes into Ada's book, which lives on Ada's cluster, with a photo she uploads.
            let adaID = try #require(try await people.store.account(username: "ada")).userRecordName
            let graceID = try #require(try await people.store.account(username: "grace")).userRecordName
            let (adaBefore, graceBefore) = (
                try await people.store.storageUsage(owner: adaID).usedBytes,
                try await people.store.storageUsage(owner: graceID).usedBytes
            )
            _ = try grace.interchange.importVCards(
                TestPhotos.card("Cousin", v3: cousinPhoto), into: try book(grace, "Family").zoneID)
            try grace.edit("Mum") { $0.notes = "birthday in May" }
            try await grace.sync()
            // The photo moved to Ada's cluster with the save, and counts in Ada's storage, not Grace's.
            let adaAfter = try await people.store.storageUsage(owner: adaID).usedBytes
            let graceAfter = try await people.store.storageUsage(owner: graceID).usedBytes
            #expect(adaAfter - adaBefore >= Int64(cousinPhoto.count), "Ada's usage: \(adaBefore) → \(adaAfter)")
            #expect(
                graceAfter - graceBefore < Int64(cousinPhoto.count), "Grace's usage: \(graceBefore) → \(graceAfter)")
            try await adaPhone.sync()
            #expect(try names(adaPhone, in: "Family") == ["Cousin", "Mum"])
            #expect(try adaPhone.contact(named: "Mum").notes == "birthday in May")
            #expect(try await photo(adaPhone, of: "Cousin") == cousinPhoto, "Grace's photo is in Ada's book")

            // Grace's own book, on her cluster, shared with Ada read-write: Ada writes into it.
            let friends = try grace.books.createBook(named: "Friends")
            try grace.contacts.add(Contact(name: "Hedy"), to: friends.zoneID)
            try await grace.sync()
            let back = try await grace.books.shareBook(friends, with: "ada", readOnly: false)
            try await ada.books.acceptInvitation(back.description)
            try ada.edit("Hedy") { $0.organization = "Frequency hopping" }
            try await ada.sync()
            try await grace.sync()
            #expect(try grace.contact(named: "Hedy").organization == "Frequency hopping")

            // Push across instances and clusters: Grace's device fetches the phone's edit by itself.
            try adaPhone.edit("Cousin") { $0.notes = "met at the engine works" }
            try await adaPhone.sync()
            try await waitUntil("Grace's device hears of Ada's edit by push and fetches it") {
                (try? grace.contact(named: "Cousin").notes) == "met at the engine works"
            } observed: {
                "Grace's Cousin: \(String(describing: try? grace.contact(named: "Cousin").notes))"
            }
            #expect(try ada.store.pendingCount() == 0 && adaPhone.store.pendingCount() == 0)
        }
    }

    @Test(
        "after a move, until its old copy is deleted, nothing lists the account's shares twice: Grace's shared book once, her sync unchanged"
    )
    func oldCopyIsNotRead() async throws {
        try await withPeople { people in
            let (ada, grace) = (people.ada, people.grace)
            let family = try ada.books.createBook(named: "Family")
            try ada.contacts.add(Contact(name: "Mum"), to: family.zoneID)
            try await ada.sync()
            try await grace.books.acceptInvitation(
                try await ada.books.shareBook(family, with: "grace", readOnly: false).description)
            let adaID = try #require(try await people.store.account(username: "ada")).userRecordName
            let graceID = try #require(try await people.store.account(username: "grace")).userRecordName

            // The move waits (far longer than this test) before it deletes the old copy.
            let move = Task { try await people.store.move(username: "ada", to: "second", settle: .seconds(3600)) }
            try await waitUntil("Ada is placed on the second cluster") {
                try await people.store.cluster(ofUsername: "ada") == "second"
            }
            #expect(try await people.store.rowCounts(of: adaID)["main", default: 0] > 0, "the old copy is there")
            let shared = try await people.store.sharedZones(user: graceID)
            #expect(shared.map(\.zoneName) == [family.zoneID.zoneName], "listed once: \(shared)")
            try grace.edit("Mum") { $0.notes = "while the old copy stays" }
            try await grace.sync()
            try await ada.sync()
            #expect(try ada.contact(named: "Mum").notes == "while the old copy stays")
            #expect(try grace.store.books().filter { $0.name == "Family" }.count == 1)
            move.cancel()
            _ = await move.result
        }
    }

    @Test(
        "Ada moved to the second cluster while her phone adds and syncs in a loop: every contact and photo is there after, on both devices, with no new sign-in; Grace's share of her book still works; nothing of Ada stays on the main cluster"
    )
    func moveWhileSyncing() async throws {
        try await withPeople { people in
            let (ada, adaPhone, grace) = (people.ada, people.adaPhone, people.grace)
            var cards = ""
            var photos: [String: Data] = [:]
            for index in 0..<300 {
                let name = String(format: "Contact %03d", index)
                if index % 50 == 0 {
                    photos[name] = TestPhotos.image(8_000 + index, seed: UInt32(index))
                    cards += TestPhotos.card(name, v3: photos[name])
                } else {
                    cards += TestPhotos.card(name, v3: nil)
                }
            }
            _ = try ada.interchange.importVCards(cards)
            let family = try ada.books.createBook(named: "Family")
            try ada.contacts.add(Contact(name: "Mum"), to: family.zoneID)
            try await ada.sync()
            let invitation = try await ada.books.shareBook(family, with: "grace", readOnly: false)
            try await grace.books.acceptInvitation(invitation.description)
            try await adaPhone.sync()
            guard let ada0 = try await people.store.account(username: "ada") else {
                Issue.record("no account ada")
                return
            }

            // The phone adds a contact and syncs, again and again, until the move is over and one more round.
            let moved = Atomic(false)
            let errors = Mutex<[String]>([])
            let loop = Task {
                var added = 0
                var roundsAfter = 0
                while roundsAfter < 3 {
                    if moved.load(ordering: .acquiring) { roundsAfter += 1 }
                    try adaPhone.contacts.add(Contact(name: "Loop \(added)"))
                    added += 1
                    do {
                        try await adaPhone.sync()
                    } catch {
                        // A sync that meets the move is told to come back; the next round sends again.
                        errors.withLock { $0.append("\(error)") }
                    }
                }
                return added
            }
            let report: AccountMoveReport
            do {
                report = try await people.store.move(username: "ada", to: "second")
            } catch {
                loop.cancel()
                throw SyncError(.internalError, "the move failed: \(String(reflecting: error))")
            }
            moved.store(true, ordering: .releasing)
            let added = try await loop.value
            #expect(report.from == "main" && report.to == "second")
            #expect(try await people.store.cluster(ofUsername: "ada") == "second")

            // Both devices finish with a sync of their own, signed in as before.
            try await adaPhone.sync()
            try await ada.sync()
            let expected = Set((0..<300).map { String(format: "Contact %03d", $0) } + (0..<added).map { "Loop \($0)" })
            for device in [ada, adaPhone] {
                let all = try device.store.contacts(in: try book(device, "Contacts").zoneID).map(\.name)
                #expect(all.count == expected.count, "no contact twice")
                #expect(Set(all) == expected, "every contact, with every loop round's")
                #expect(try device.store.pendingCount() == 0)
            }
            for (name, image) in photos {
                #expect(try await photo(ada, of: name) == image, "\(name)'s photo after the move")
            }
            // Grace's share moved with Ada's book: she still reads and writes it.
            try grace.edit("Mum") { $0.notes = "after the move" }
            try await grace.sync()
            try await ada.sync()
            #expect(try ada.contact(named: "Mum").notes == "after the move")
            let counts = try await people.store.rowCounts(of: ada0.userRecordName)
            #expect(counts["main"] == 0, "the old copy is gone: \(counts)")
            #expect(counts["second", default: 0] > 300)
            // The errors the loop met (if any) were the move's pause, not a sign-out.
            for error in errors.withLock({ $0 }) {
                #expect(!error.contains("sign in"), "\(error)")
            }
        }
    }
}
