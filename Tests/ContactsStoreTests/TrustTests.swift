import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncCore
import SyncCrypto
import SyncKit
import SyncServer
import SyncTesting
import Testing

/// Trust without trusting the server (issue 65): the people one shares with are known by their keys'
/// fingerprints, a key the server gives that is not the verified one is refused, invitations can be listed,
/// declined and cancelled, and an owner changes a person's permission with their queued writes refused
/// before sending and kept.
///
/// A server lying about a key is a server giving, at lookup or acceptance, a key other than the one the
/// device's person verified: each test below verifies a key, then makes the server's answer differ from
/// it (by recording another key as the verified one, which is what the device compares against).
@Suite("Contacts: keys people verify, invitations, permissions")
struct TrustTests {
    private func adaClient(_ server: TestServer) async throws -> TestClient {
        try await TestClient(baseURL: server.baseURL).signedIn(username: "ada", password: "correct horse battery")
    }

    /// A key nobody has: what a server hands out when it impersonates someone.
    private static let forgedKey = AccountIdentityKey.generate().publicKey

    @Test("fingerprints: a safety number of 30 digits and eight words, from the key alone; either form matches")
    func fingerprints() throws {
        let key = AccountIdentityKey.generate().publicKey
        let fingerprint = KeyFingerprint(publicKey: key)
        #expect(fingerprint.safetyNumber.count == 35)
        #expect(fingerprint.safetyNumber.split(separator: " ").map(\.count) == [5, 5, 5, 5, 5, 5])
        #expect(fingerprint.words.split(separator: "-").count == 8)
        #expect(fingerprint.matches(fingerprint.safetyNumber.replacingOccurrences(of: " ", with: "")))
        #expect(fingerprint.matches(fingerprint.words.uppercased().replacingOccurrences(of: "-", with: " ")))
        #expect(KeyFingerprint(publicKey: key) == fingerprint, "the same key, the same fingerprint")
        let other = KeyFingerprint(publicKey: Self.forgedKey)
        #expect(!fingerprint.matches(other.safetyNumber))
        #expect(!fingerprint.matches(other.words))
        #expect(!fingerprint.matches(""))
        #expect(!fingerprint.matches("not a number"))
        #expect(Proquint.decode(Proquint.encode([0, 1, 254, 255])) == [0, 1, 254, 255])
        #expect(Proquint.decode("babad-xxxxx") == nil)
    }

    @Test(
        "verification: each side's fingerprint is what the other sees; a wrong number verifies nothing; a key other than the verified one is refused for wraps and shares, loudly, until verified again"
    )
    func verifiedKeyRefused() async throws {
        try await withBookPeople { people in
            let (ada, grace) = (people.ada, people.grace)
            let family = try ada.books.createBook(named: "Family")
            try ada.contacts.add(Contact(name: "Mum"), to: family.zoneID)
            let invitation = try await ada.books.shareBook(family, with: "grace", readOnly: false)
            try await grace.books.acceptInvitation(invitation.description)
            try await ada.sync()

            // What Grace reads out is what Ada's device shows for her, and the other way round.
            let graceFingerprint = try await grace.books.accountFingerprint()
            let adaFingerprint = try await ada.books.accountFingerprint()
            let shared = try ada.store.resolveBook("Family")
            let seen = try await ada.books.personKeys(of: shared, online: true)
            #expect(seen.map(\.participant.username) == ["grace"])
            #expect(seen.first?.fingerprint == graceFingerprint)
            #expect(seen.first?.trust == .unverified)
            let seenByGrace = try await grace.books.personKeys(of: try grace.store.resolveBook("Family"), online: true)
            #expect(seenByGrace.first { $0.participant.username == "ada" }?.fingerprint == adaFingerprint)

            // A number Grace did not read verifies nothing.
            await #expect(throws: DeviceError.self) {
                try await ada.books.verifyKey(
                    of: "grace", in: shared, confirmation: KeyFingerprint(publicKey: Self.forgedKey).safetyNumber)
            }
            #expect(try ada.store.knownKeys().values.allSatisfy { !$0.isVerified })
            try await ada.books.verifyKey(of: "grace", in: shared, confirmation: graceFingerprint.words)
            #expect(try await ada.books.personKeys(of: shared, online: true).first?.trust == .verified)
            // Ada's phone learns the verification (a sealed record of her default book), so it refuses too.
            try await people.adaPhone.sync()
            let graceRecordName = try #require(try grace.store.setting(.userRecordName))
            let phoneKnows = try #require(try people.adaPhone.store.knownKey(graceRecordName))
            #expect(phoneKnows.isVerified)
            #expect(phoneKnows.fingerprint == graceFingerprint)
            #expect(
                try await people.adaPhone.books.personKeys(
                    of: try people.adaPhone.store.resolveBook("Family"), online: true
                )
                .first?.trust == .verified)

            // The server now gives another key for Grace than the one Ada verified.
            let graceName = try #require(try grace.store.setting(.userRecordName))
            var verified = try #require(try ada.store.knownKey(graceName))
            let realKey = verified.publicKey
            verified.publicKey = Self.forgedKey
            try ada.store.saveKnownKey(verified)
            let client = try await adaClient(people.server)
            let versionBefore = try #require(
                try await client.listZones().first { $0.zoneID == family.zoneID }?.encryptionKey?.keyVersion)

            // Ada's sync refuses to wrap the book's keys to it: the book gets a new key Grace does not hold.
            try await ada.sync()
            let zoneVersion = try #require(
                try await client.listZones().first { $0.zoneID == family.zoneID }?.encryptionKey?.keyVersion)
            #expect(zoneVersion == versionBefore + 1, "Grace is no longer a holder: a new version")
            let share = try await client.fetchShare(family.zoneID)
            let graceShare = try #require(share.participants.first { $0.username == "grace" })
            #expect(graceShare.sharedKeyVersion == versionBefore, "nothing wrapped to the key the server gave now")
            // Loudly: the status, the device's refusals, the participant list.
            let refused = try ada.store.refusedKeys()
            #expect(refused.map(\.current.username) == ["grace"])
            #expect(refused.first?.current.publicKey == realKey)
            #expect(refused.first?.description.contains("CHANGED") == true)
            #expect(ada.status.refusedKeys.count == 1)
            #expect(try await ada.books.personKeys(of: shared, online: true).first?.trust == .changedSinceVerified)
            // Sharing another book with her is refused before anything is shared.
            let work = try ada.books.createBook(named: "Work")
            let error = await #expect(throws: SyncError.self) {
                try await ada.books.shareBook(work, with: "grace", readOnly: true)
            }
            #expect(error?.reason == .verifiedKeyChanged)
            await #expect(throws: SyncError.self, "nothing was shared") { try await client.fetchShare(work.zoneID) }

            // Ada writes on, sealed with the version the key the server gave was refused.
            try ada.contacts.add(Contact(name: "Secret after the change"), to: family.zoneID)
            try await ada.sync()
            #expect(
                try await client.fetchShare(family.zoneID).participants.first { $0.username == "grace" }?
                    .sharedKeyVersion == versionBefore)

            // Ada compares again (Grace reads her real number), verifies, and Grace gets the keys back.
            try await ada.books.verifyKey(of: "grace", in: shared, confirmation: graceFingerprint.safetyNumber)
            #expect(try ada.store.refusedKeys().isEmpty)
            #expect(ada.status.refusedKeys.isEmpty)
            try await ada.sync()
            let newest = try #require(
                try await client.listZones().first { $0.zoneID == family.zoneID }?.encryptionKey?.keyVersion)
            #expect(newest > zoneVersion, "Grace is a holder again: a new version")
            #expect(
                try await client.fetchShare(family.zoneID).participants.first { $0.username == "grace" }?
                    .sharedKeyVersion == newest)
            try await grace.sync()
            let graceFamily = try grace.store.resolveBook("Family").zoneID
            #expect(
                try grace.store.contacts(in: graceFamily).map(\.name).sorted() == ["Mum", "Secret after the change"])
        }
    }

    @Test(
        "a key that changes for someone never verified is taken with a warning; the owner's key at acceptance, once verified, is refused when the server gives another"
    )
    func unverifiedChangeAndAcceptance() async throws {
        try await withBookPeople { people in
            let (ada, grace) = (people.ada, people.grace)
            let family = try ada.books.createBook(named: "Family")
            try ada.contacts.add(Contact(name: "Mum"), to: family.zoneID)
            let invitation = try await ada.books.shareBook(family, with: "grace", readOnly: false)
            try await grace.books.acceptInvitation(invitation.description)
            try await ada.sync()
            _ = try ada.store.takeKeyNotices()

            // Never verified: the device had another key for Grace; the server's is taken with a warning.
            let graceName = try #require(try grace.store.setting(.userRecordName))
            var seen = try #require(try ada.store.knownKey(graceName))
            seen.publicKey = Self.forgedKey
            try ada.store.saveKnownKey(seen)
            try await ada.sync()
            let notices = try ada.store.takeKeyNotices()
            #expect(notices.count == 1 && notices[0].contains("grace's account key changed"), "\(notices)")
            #expect(try ada.store.takeKeyNotices().isEmpty, "said once")
            #expect(try ada.store.refusedKeys().isEmpty)
            #expect(try ada.store.knownKey(graceName)?.publicKey != Self.forgedKey)

            // Grace verified Ada's key; the server now gives another for Ada at the next acceptance.
            let adaFingerprint = try await ada.books.accountFingerprint()
            let sharedFamily = try grace.store.resolveBook("Family")
            try await grace.books.verifyKey(of: "ada", in: sharedFamily, confirmation: adaFingerprint.safetyNumber)
            let adaName = try #require(try ada.store.setting(.userRecordName))
            var verified = try #require(try grace.store.knownKey(adaName))
            verified.publicKey = Self.forgedKey
            try grace.store.saveKnownKey(verified)
            let work = try ada.books.createBook(named: "Work")
            try ada.contacts.add(Contact(name: "Boss"), to: work.zoneID)
            let workInvitation = try await ada.books.shareBook(work, with: "grace", readOnly: true)
            let waiting = try await grace.books.receivedInvitations()
            #expect(waiting.map(\.owner) == ["ada"])
            #expect(waiting.first?.ownerTrust == .changedSinceVerified)
            let error = await #expect(throws: SyncError.self) {
                try await grace.books.acceptInvitation(workInvitation.description)
            }
            #expect(error?.reason == .verifiedKeyChanged)
            #expect(try await grace.books.receivedInvitations().count == 1, "not accepted")
            #expect(try grace.store.books().contains { $0.zoneID.zoneName == work.zoneID.zoneName } == false)
        }
    }

    @Test(
        "invitations: listed with the sender's fingerprint, accepted by the sender's name, declined and cancelled for good"
    )
    func invitations() async throws {
        try await withBookPeople { people in
            let (ada, grace) = (people.ada, people.grace)
            let family = try ada.books.createBook(named: "Family")
            let work = try ada.books.createBook(named: "Work")
            let trips = try ada.books.createBook(named: "Trips")
            let familyInvitation = try await ada.books.shareBook(family, with: "grace", readOnly: false)
            let workInvitation = try await ada.books.shareBook(work, with: "grace", readOnly: true)
            let tripsInvitation = try await ada.books.shareBook(trips, with: "grace", readOnly: false)

            let adaFingerprint = try await ada.books.accountFingerprint()
            let waiting = try await grace.books.receivedInvitations()
            #expect(waiting.count == 3)
            #expect(waiting.allSatisfy { $0.owner == "ada" && $0.ownerFingerprint == adaFingerprint })
            #expect(
                Set(waiting.map(\.invitation.token))
                    == Set([familyInvitation, workInvitation, tripsInvitation].map(\.token)))
            let sent = try await ada.books.sentInvitations(online: true)
            #expect(Set(sent.map(\.book.name)) == ["Family", "Work", "Trips"])
            #expect(sent.allSatisfy { $0.person.participant.username == "grace" && $0.person.trust == .unverified })
            // By name only when Ada sent one.
            await #expect(throws: DeviceError.self) { try await grace.books.receivedInvitation("ada") }

            // Declined: gone from the list, and the invitation no longer opens the book.
            let declined = try await grace.books.declineInvitation(workInvitation.description)
            #expect(declined.invitation.token == workInvitation.token)
            await #expect(throws: DeviceError.self) {
                try await grace.books.acceptInvitation(workInvitation.description)
            }
            await #expect(throws: DeviceError.self) {
                try await grace.books.declineInvitation(workInvitation.description)
            }
            #expect(try await ada.books.sentInvitations(online: true).map(\.book.name).sorted() == ["Family", "Trips"])

            // Cancelled by Ada: gone for Grace too.
            try await ada.books.cancelInvitation(trips, for: "grace")
            await #expect(throws: DeviceError.self) {
                try await grace.books.acceptInvitation(tripsInvitation.description)
            }
            #expect(try await grace.books.receivedInvitations().map(\.invitation.token) == [familyInvitation.token])

            // Accepted by Ada's name, the one left; then Ada cannot cancel it (she unshares instead).
            let accepted = try await grace.books.receivedInvitation("ADA")
            try await grace.books.acceptInvitation(accepted.invitation.description)
            #expect(try await grace.books.receivedInvitations().isEmpty)
            await #expect(throws: DeviceError.self) { try await ada.books.cancelInvitation(family, for: "grace") }
            await #expect(throws: DeviceError.self) {
                try await grace.books.declineInvitation(familyInvitation.description)
            }
            #expect(try await ada.books.sentInvitations(online: true).isEmpty)
        }
    }

    @Test(
        "permission: read-only at once on the server; the person's queued writes are refused before sending and kept in their conflict log; read-write again lets them write"
    )
    func permissionDowngrade() async throws {
        try await withBookPeople { people in
            let (ada, grace) = (people.ada, people.grace)
            let family = try ada.books.createBook(named: "Family")
            let mum = Contact(name: "Mum", organization: "Home")
            try ada.contacts.add(mum, to: family.zoneID)
            let invitation = try await ada.books.shareBook(family, with: "grace", readOnly: false)
            try await grace.books.acceptInvitation(invitation.description)

            let graceFamily = try grace.store.resolveBook("Family").zoneID
            // Grace edits offline: a change to Mum and a new contact, queued.
            var edited = try #require(try grace.store.contact(mum.id))
            edited.organization = "Grace's note"
            try grace.contacts.update(edited)
            let cousin = Contact(name: "Cousin")
            _ = try grace.contacts.add(cousin, to: graceFamily)
            #expect(try grace.store.pendingCount() == 2)

            try await ada.books.setPermission(family, for: "grace", readOnly: true)
            await #expect(throws: DeviceError.self) {
                try await ada.books.setPermission(family, for: "grace", readOnly: true)
            }
            let share = try await adaClient(people.server).fetchShare(family.zoneID)
            #expect(share.participants.first { $0.username == "grace" }?.permission == .readOnly)

            // Grace's sync learns it and refuses her two changes before sending them.
            try await grace.sync()
            #expect(try grace.store.pendingCount() == 0)
            let book = try grace.store.resolveBook("Family")
            #expect(!book.canEdit)
            #expect(try grace.store.contact(mum.id)?.organization == "Home", "the owner's version again")
            #expect(try grace.store.contact(cousin.id) == nil)
            let kept = try grace.store.conflicts()
            #expect(kept.contains { $0.contactID == mum.id && $0.lost.value.text == "Grace's note" }, "\(kept)")
            #expect(kept.contains { $0.contactID == cousin.id && $0.lost.value.text == "Cousin" }, "\(kept)")
            // Nothing of them reached the server.
            try await ada.sync()
            #expect(try ada.store.contact(mum.id)?.organization == "Home")
            #expect(try ada.store.contact(cousin.id) == nil)
            // And a new edit is refused locally, with the reason.
            #expect(throws: ContactError.self) { try grace.contacts.add(Contact(name: "Another"), to: graceFamily) }

            // Read-write again: Grace writes, Ada sees it.
            try await ada.books.setPermission(family, for: "grace", readOnly: false)
            try await grace.sync()
            #expect(try grace.store.resolveBook("Family").canEdit)
            _ = try grace.contacts.add(cousin, to: graceFamily)
            try await grace.sync()
            try await ada.sync()
            #expect(try ada.store.contact(cousin.id)?.name == "Cousin")
        }
    }

    @Test(
        "recovery: a wrong or garbled key changes nothing; the right one on a new device sets a new passphrase with every book and share intact, through a passphrase change made since; the key used is spent"
    )
    func recovery() async throws {
        try await withBookPeople { people in
            let (ada, grace) = (people.ada, people.grace)
            let recoveryKey = try await ada.account.setUpRecoveryKey()
            let family = try ada.books.createBook(named: "Family")
            try ada.contacts.add(Contact(name: "Mum"), to: family.zoneID)
            try ada.contacts.add(Contact(name: "Own contact"))
            let familyInvitation = try await ada.books.shareBook(family, with: "grace", readOnly: false)
            try await grace.books.acceptInvitation(familyInvitation.description)
            let trips = try grace.books.createBook(named: "Trips")
            try grace.contacts.add(Contact(name: "Guide"), to: trips.zoneID)
            let tripsInvitation = try await grace.books.shareBook(trips, with: "ada", readOnly: false)
            try await ada.books.acceptInvitation(tripsInvitation.description)
            // A passphrase change after the recovery key was made: it seals the new account key to it.
            try await ada.account.changePassphrase(to: "ada's second passphrase")
            try await ada.sync()

            try await withTemporaryDirectory { directory in
                let newDevice = try openDevice("ada-new", directory: directory, server: people.server)
                // Garbled, then well-formed but not Ada's: refused, nothing changed.
                await #expect(throws: DeviceError.self) {
                    try await newDevice.account.recover(
                        username: "ada", password: "correct horse battery", recoveryKey: "not a key",
                        newPassphrase: "forgotten no more")
                }
                let wrongKey = RecoveryKey.generate()
                let wrong = await #expect(throws: DeviceError.self) {
                    try await newDevice.account.recover(
                        username: "ada", password: "correct horse battery", recoveryKey: wrongKey.text,
                        newPassphrase: "forgotten no more")
                }
                #expect(wrong.map { "\($0)" } == "\(DeviceError.wrongRecoveryKey)")
                #expect(!newDevice.isSignedIn)
                try await ada.sync()

                // The right key, typed with other case and spaces: a new passphrase; nothing lost.
                let typed = recoveryKey.text.uppercased().replacingOccurrences(of: "-", with: " ")
                let next = try await newDevice.account.recover(
                    username: "ada", password: "correct horse battery", recoveryKey: typed,
                    newPassphrase: "forgotten no more")
                #expect(next != recoveryKey)
                try await newDevice.sync()
                #expect(try newDevice.store.contacts().map(\.name).sorted() == ["Guide", "Mum", "Own contact"])
                #expect(try newDevice.account.passphrase() == "forgotten no more")

                // The shares both ways still work: Grace reads what the new device writes, and the other way.
                let newFamily = try newDevice.store.resolveBook("Family")
                try newDevice.contacts.add(Contact(name: "Written after recovery"), to: newFamily.zoneID)
                try grace.contacts.add(Contact(name: "Grace's after recovery"), to: trips.zoneID)
                try await newDevice.sync()
                try await grace.sync()
                try await newDevice.sync()
                let graceFamily = try grace.store.resolveBook("Family").zoneID
                #expect(try grace.store.contacts(in: graceFamily).map(\.name).contains("Written after recovery"))
                let adaTrips = try newDevice.store.resolveBook("Trips").zoneID
                #expect(try newDevice.store.contacts(in: adaTrips).map(\.name).contains("Grace's after recovery"))

                // The old device needs the new passphrase now; the key used is spent, the new one works.
                await #expect(throws: (any Error).self) { try await ada.sync() }
                await #expect(throws: DeviceError.self) {
                    try await newDevice.account.recover(
                        username: "ada", password: "correct horse battery", recoveryKey: recoveryKey.text,
                        newPassphrase: "again")
                }
                try await ada.account.setPassphrase("forgotten no more")
                try await ada.sync()
                #expect(try ada.store.contacts().map(\.name).contains("Written after recovery"))
            }
        }
    }

    @Test(
        "a server that makes up an account, key pair and all, and seals its key to the recovery key's public half is refused by the recovery; nothing changes"
    )
    func fabricatedAccountRefusedAtRecovery() async throws {
        try await withBookPeople { people in
            let ada = people.ada
            let recoveryKey = try await ada.account.setUpRecoveryKey()
            try ada.contacts.add(Contact(name: "Mum"))
            try await ada.sync()
            let adaName = try #require(try ada.store.setting(.userRecordName))
            let store = people.server.store
            let kept = try #require(try await store.recovery(owner: adaName))

            // The server replaces the account's encryption with its own, and seals its own account key to the
            // recovery key's public half, with the binding and verifier hash it kept.
            _ = try await store.resetEncryptedData(owner: adaName, now: Date())
            let (fake, fakeKey) = try EncryptionSettings.create(
                passphrase: "the server's",
                parameters: try ScryptParameters(costN: 1024, blockSizeR: 8, parallelismP: 1))
            let wire = AccountEncryptionSettings(
                salt: fake.salt, costN: fake.parameters.costN, blockSizeR: fake.parameters.blockSizeR,
                parallelismP: fake.parameters.parallelismP, keyVersion: fake.keyVersion, verifier: fake.verifier)
            #expect(try await store.createEncryptionSettings(owner: adaName, wire, now: Date()) == nil)
            let serverPair = AccountIdentityKey.generate()
            _ = try await store.createKeyPair(
                owner: adaName,
                AccountKeyPair(
                    publicKey: serverPair.publicKey, wrappedPrivateKey: serverPair.wrappedPrivateKey(by: fakeKey)))
            _ = try await store.setRecovery(
                owner: adaName, expectedKeyVersion: fake.keyVersion,
                StoredRecovery(
                    recovery: kept.recovery,
                    sealedAccountKey: try RecoveryKey.seal(
                        fakeKey, to: kept.recovery.publicKey, userRecordName: adaName),
                    verifierHash: kept.verifierHash))

            try await withTemporaryDirectory { directory in
                let newDevice = try openDevice("ada-new", directory: directory, server: people.server)
                let refused = await #expect(throws: SyncError.self) {
                    try await newDevice.account.recover(
                        username: "ada", password: "correct horse battery", recoveryKey: recoveryKey.text,
                        newPassphrase: "taken over")
                }
                #expect(
                    refused?.message.contains("not the one this recovery key was made for") == true, "\(refused as Any)"
                )
                #expect(!newDevice.isSignedIn)
                #expect(
                    try await store.encryptionSettings(owner: adaName)?.keyVersion == fake.keyVersion, "nothing changed"
                )
            }
        }
    }

    @Test(
        "known keys: a verified person named anew by the server (another record name, the same username) is refused; the verified key given again ends a refusal"
    )
    func renamedAndRestoredKeys() async throws {
        try await withBookPeople { people in
            let (ada, grace) = (people.ada, people.grace)
            let family = try ada.books.createBook(named: "Family")
            let invitation = try await ada.books.shareBook(family, with: "grace", readOnly: false)
            try await grace.books.acceptInvitation(invitation.description)
            let graceFingerprint = try await grace.books.accountFingerprint()
            try await ada.books.verifyKey(
                of: "grace", in: try ada.store.resolveBook("Family"), confirmation: graceFingerprint.safetyNumber)
            let graceName = try #require(try grace.store.setting(.userRecordName))
            let realKey = try #require(try ada.store.knownKey(graceName)?.publicKey)

            // The same username under another record name, with another key: the verified one is found and the
            // new one refused.
            let keyring = Keyring(
                passphrase: "unused",
                knownKeys: KnownKeys(
                    load: { try ada.store.knownKey(for: $0) }, save: { try ada.store.saveKnownKey($0) },
                    changed: { _ in }))
            let container = Container(
                identifier: "contacts", serverURL: URL(string: people.server.baseURL)!, credentials: .token("unused"),
                keyring: keyring)
            let impostor = AccountInfo(userRecordName: "_impostor", username: "Grace", publicKey: Self.forgedKey)
            let error = #expect(throws: SyncError.self) { try container.checkPublicKey(of: impostor) }
            #expect(error?.reason == .verifiedKeyChanged)
            #expect(try ada.store.knownKey("_impostor") == nil, "nothing kept of the impostor")

            // A refusal of Grace's key, then the server gives the verified key again: the refusal ends.
            var verified = try #require(try ada.store.knownKey(graceName))
            verified.publicKey = Self.forgedKey
            try ada.store.saveKnownKey(verified)
            try await ada.sync()
            #expect(try ada.store.refusedKeys().count == 1)
            verified = try #require(try ada.store.knownKey(graceName))
            verified.publicKey = realKey
            try ada.store.saveKnownKey(verified)
            #expect(try ada.store.refusedKeys().count == 1, "still refused until the server gives it")
            try await ada.sync()
            #expect(try ada.store.refusedKeys().isEmpty)
            #expect(ada.status.refusedKeys.isEmpty)
        }
    }
}
