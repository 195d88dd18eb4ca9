import ContactsModel
import ContactsStore
import ContactsTesting
import Foundation
import SyncTesting
import Testing

@Suite("Signing out leaves no secret in the device file, and keeps the contacts")
struct SignOutTests {
    /// The device file and its write-ahead log, as bytes: what someone who copies them reads.
    static func rawBytes(of store: ContactStore) -> [UInt8] {
        [store.path, store.path + "-wal"].flatMap { path in
            (FileManager.default.contents(atPath: path)).map(Array.init) ?? []
        }
    }

    static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { start in
            bytes[start] == needle[0] && bytes[start..<(start + needle.count)].elementsEqual(needle)
        }
    }

    @Test(
        "sign-out removes the passphrase, the account key and the token from the file; a sync says it is signed out; edits stay and sync after sign-in"
    )
    func signOutScrubsSecrets() async throws {
        try await withContactsDevices(2) { _, _, devices in
            let (a, b) = (devices[0], devices[1])
            try a.contacts.add(Contact(name: "Synced before"))
            try await a.sync()
            try a.contacts.add(Contact(name: "Pending at sign-out"))
            let token = try #require(try a.store.setting(.token))
            let kept = try #require(try a.store.setting(.derivedAccountKey))
            let keyText = String(kept.split(separator: ":").last ?? "")
            let key = try #require(Data(base64Encoded: keyText))
            let before = Self.rawBytes(of: a.store)
            // The test looks for what is there before: the search itself works.
            #expect(Self.contains(before, Array(testPassphrase.utf8)))
            #expect(Self.contains(before, Array(keyText.utf8)))

            try await a.account.signOut()

            #expect(!a.isSignedIn)
            for setting: Setting in [.passphrase, .derivedAccountKey, .token] {
                #expect(try a.store.setting(setting) == nil, "\(setting) is still in the device file")
            }
            let after = Self.rawBytes(of: a.store)
            #expect(!Self.contains(after, Array(testPassphrase.utf8)), "the passphrase's bytes are in the file")
            #expect(!Self.contains(after, Array(keyText.utf8)), "the account key (base64) is in the file")
            #expect(!Self.contains(after, Array(key)), "the account key's bytes are in the file")
            #expect(!Self.contains(after, Array(token.utf8)), "the session token is in the file")
            // Contacts and the pending edit stay on the device.
            #expect(a.names == ["Pending at sign-out", "Synced before"])
            #expect(try a.store.pendingCount() == 1)

            // Signed out, a sync can fetch and send nothing: it says so, and records no sync and no error.
            let lastSync = try a.store.setting(.lastSync)
            let lastOutcome = a.status.lastOutcome
            await #expect(throws: DeviceError.notSignedIn) { try await a.sync() }
            #expect(try a.store.setting(.lastSync) == lastSync, "a sync that did nothing was recorded")
            #expect(try a.store.setting(.lastError) == nil)
            #expect(a.status.lastOutcome == lastOutcome)
            #expect(try a.store.pendingCount() == 1)

            // Signing in again (with the passphrase again) sends what was pending.
            try await a.account.signIn(username: "ada", password: "correct horse battery", passphrase: testPassphrase)
            try await a.sync()
            #expect(try a.store.pendingCount() == 0)
            try await b.sync()
            #expect(b.names == ["Pending at sign-out", "Synced before"])
        }
    }
}
