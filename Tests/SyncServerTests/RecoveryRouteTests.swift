import Crypto
import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

/// The recovery key's routes as an attacker meets them: the sealed account key only for the right
/// verifier, wrong ones throttled like passwords, nothing of one account's recovery for another, and a
/// passphrase change that must carry the recovery key along. Time is a `TestClock`.
@Suite("Recovery keys: the server's side", .onEveryBackend)
struct RecoveryRouteTests {
    private static let settings =
        #"{"salt":"AAECAwQFBgcICQoLDA0ODw==","costN":1024,"blockSizeR":8,"parallelismP":1,"keyVersion":1,"verifier":"AQID"}"#

    private static func setup(verifier: Data, publicKey: UInt8 = 7) -> RecoverySetup {
        RecoverySetup(
            recovery: AccountRecovery(
                publicKey: Data(repeating: publicKey, count: 32), keyTag: Data(repeating: 9, count: 32),
                bindingTag: Data(repeating: 5, count: 32)),
            sealedAccountKey: Data([6, 0, 0, 0, 1, 42]), verifierHash: Data(SHA256.hash(data: verifier)))
    }

    private func open(_ client: TestClient, _ verifier: Data) async throws -> HTTPAnswer {
        try await client.send(.openRecovery, body: try JSONEncoder().encode(RecoveryOpenRequest(verifier: verifier)))
    }

    @Test(
        "set up only over the current account key; answered as public half and tag; the sealed key only for the right verifier, wrong ones throttled, the right one after the wait"
    )
    func recoveryRoutes() async throws {
        let clock = TestClock()
        var configuration = SyncServerConfiguration.testing
        configuration.clock = ServerClock(clock, startingAt: Date())
        configuration.usernameSignInThrottle = .init(
            freeFailures: 3, initialDelay: .seconds(10), maximumDelay: .seconds(3600), forgetAfter: .seconds(86_400))
        try await withServer(configuration: configuration) { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let grace = try await anonymous.signedUp(username: "grace")
            let verifier = Data("ada's verifier".utf8)
            let request = RecoveryKeyRequest(expectedKeyVersion: 1, setup: Self.setup(verifier: verifier))

            // No settings yet: nothing to recover.
            let early = try await ada.send(.setUpRecovery, body: try JSONEncoder().encode(request))
            #expect(early.error?.code == .unknownItem)
            #expect(try await ada.send(.put, "/v1/account/encryption", body: Data(Self.settings.utf8)).status == 201)
            #expect(try await open(ada, verifier).error?.code == .unknownItem, "no recovery key yet")

            // Over another key version: refused with the settings.
            var stale = request
            stale.expectedKeyVersion = 2
            let refused = try await ada.send(.setUpRecovery, body: try JSONEncoder().encode(stale))
            #expect(refused.error?.code == .serverRecordChanged)
            #expect(refused.error?.serverEncryptionSettings?.keyVersion == 1)
            // Without the verifier's hash: refused.
            var blind = request
            blind.setup.verifierHash = nil
            #expect(
                try await ada.send(.setUpRecovery, body: try JSONEncoder().encode(blind)).error?.code
                    == .invalidArguments)

            let stored: AccountEncryptionSettings = try await ada.call(.setUpRecovery, request)
            #expect(stored.recovery == request.setup.recovery)
            // Every device sees the public half and the tag, never the sealed key or the hash.
            let answer = try await ada.send(.encryptionSettings)
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(text.contains("keyTag"))
            #expect(!text.contains("sealedAccountKey") && !text.contains("verifierHash"), "\(text)")

            // Grace, with Ada's verifier, opens nothing of Ada's (her account has no recovery key).
            #expect(try await open(grace, verifier).error?.code == .unknownItem)

            // Wrong verifiers: three are answered 403, then the account waits 10 s, the right one included.
            for attempt in 1...4 {
                let wrong = try await open(ada, Data("guess \(attempt)".utf8))
                #expect(wrong.status == 403, "attempt \(attempt)")
                #expect(wrong.error?.code == .permissionFailure)
            }
            let locked = try await open(ada, verifier)
            #expect(locked.status == 429)
            #expect(locked.error?.retryAfter == 10)
            await clock.advance(by: .seconds(10))
            let opened: RecoveryOpenResponse = try await ada.call(
                .openRecovery, RecoveryOpenRequest(verifier: verifier))
            #expect(opened.sealedAccountKey == request.setup.sealedAccountKey)
            #expect(opened.keyVersion == 1)
        }
    }

    @Test(
        "a passphrase change must seal the new account key to the recovery key it has; a reset forgets the recovery key"
    )
    func changeCarriesRecovery() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            #expect(try await ada.send(.put, "/v1/account/encryption", body: Data(Self.settings.utf8)).status == 201)
            let verifier = Data("ada's verifier".utf8)
            let _: AccountEncryptionSettings = try await ada.call(
                .setUpRecovery, RecoveryKeyRequest(expectedKeyVersion: 1, setup: Self.setup(verifier: verifier)))
            let next = AccountEncryptionSettings(
                salt: Data(repeating: 1, count: 16), costN: 1024, blockSizeR: 8, parallelismP: 1, keyVersion: 2,
                verifier: Data([2, 2, 3]))
            var change = EncryptionChangeRequest(
                expectedKeyVersion: 1, settings: next, zoneKeys: [], sharedZoneKeys: [], keyPair: nil)

            // Without the recovery key: refused (the recovery key would open an old account key).
            let without = try await ada.send(.changeEncryption, body: try JSONEncoder().encode(change))
            #expect(without.error?.code == .constraintViolation, "\(without.error as Any)")
            // Sealed to another public key, without a new verifier: refused.
            var other = Self.setup(verifier: verifier, publicKey: 8)
            other.verifierHash = nil
            change.recovery = other
            let swapped = try await ada.send(.changeEncryption, body: try JSONEncoder().encode(change))
            #expect(swapped.error?.code == .constraintViolation)

            // Sealed again to the same public key: stored, and the same verifier still opens it.
            var resealed = Self.setup(verifier: verifier)
            resealed.verifierHash = nil
            resealed.sealedAccountKey = Data([6, 0, 0, 0, 2, 43])
            change.recovery = resealed
            let changed: AccountEncryptionSettings = try await ada.call(.changeEncryption, change)
            #expect(changed.keyVersion == 2)
            #expect(changed.recovery?.publicKey == resealed.recovery.publicKey)
            let opened: RecoveryOpenResponse = try await ada.call(
                .openRecovery, RecoveryOpenRequest(verifier: verifier))
            #expect(opened.sealedAccountKey == Data([6, 0, 0, 0, 2, 43]))
            #expect(opened.keyVersion == 2)

            // A reset forgets it with the settings.
            #expect(try await ada.send(.resetEncryption, body: Data("{}".utf8)).status == 200)
            #expect(try await open(ada, verifier).error?.code == .unknownItem)
        }
    }
}
