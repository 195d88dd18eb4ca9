import Foundation
import SyncCrypto
import Testing

/// Settings as they come back from the server: they must still open with the passphrase, and hostile ones
/// must be refused with a clear error before anything is derived from them.
@Suite struct EncryptionSettingsTests {
    /// The JSON shape of EncryptionSettings with unchecked fields, to write whatever a hostile server might.
    struct RawSettings: Codable {
        struct Parameters: Codable {
            var costN: Int
            var blockSizeR: Int
            var parallelismP: Int
        }
        var salt: Data
        var parameters: Parameters
        var keyVersion: Int
        var verifier: Data
    }

    static func raw(_ settings: EncryptionSettings) throws -> RawSettings {
        try JSONDecoder().decode(RawSettings.self, from: JSONEncoder().encode(settings))
    }

    static func decode(_ raw: RawSettings) throws -> EncryptionSettings {
        try JSONDecoder().decode(EncryptionSettings.self, from: JSONEncoder().encode(raw))
    }

    @Test func settingsRoundTripThroughJSONAndStillOpenWithThePassphrase() throws {
        let (settings, key) = try TestAccount.make(passphrase: "tide pool lantern")
        let json = try JSONEncoder().encode(settings)
        let decoded = try JSONDecoder().decode(EncryptionSettings.self, from: json)
        #expect(decoded == settings)
        #expect(decoded.salt.count == 32)

        let derived = try AccountKey(passphrase: "tide pool lantern", settings: decoded)
        let zoneKey = try ZoneKey.generate(version: 1)
        let wrapped = zoneKey.wrapped(by: key, zoneName: "Contacts", ownerName: "_alice")
        let unwrapped = try ZoneKey(unwrapping: wrapped, with: derived, zoneName: "Contacts", ownerName: "_alice")
        let sealed = FieldCipher(zoneKey: zoneKey).seal(
            Data("Ada".utf8), recordVersion: 1, recordType: "Contact", recordName: "r1", zoneName: "Contacts",
            ownerName: "_alice", fieldName: "name")
        let opened = try FieldCipher(zoneKey: unwrapped).open(
            sealed, recordType: "Contact", recordName: "r1", zoneName: "Contacts", ownerName: "_alice",
            fieldName: "name"
        ).value
        #expect(opened == Data("Ada".utf8))
    }

    @Test func settingsDoNotContainThePassphrase() throws {
        let passphrase = "tide pool lantern"
        let (settings, _) = try TestAccount.make(passphrase: passphrase)
        let json = try JSONEncoder().encode(settings)
        #expect(json.range(of: Data(passphrase.utf8)) == nil)
        #expect(!String(decoding: json, as: UTF8.self).contains(passphrase))
    }

    @Test func eachAccountKeyGetsAFreshSalt() throws {
        let (first, _) = try TestAccount.make(passphrase: "same words")
        let (second, _) = try TestAccount.make(passphrase: "same words")
        #expect(first.salt != second.salt)
        #expect(first.verifier != second.verifier)
    }

    /// A change to a hostile server's copy of the settings and the words the refusal must contain.
    struct Hostile: CustomTestStringConvertible, Sendable {
        var name: String
        var expected: String
        var change: @Sendable (inout RawSettings) -> Void
        var testDescription: String { name }
    }

    static let hostile: [Hostile] = [
        Hostile(name: "N = 2^40", expected: "outside 1024...1048576") { $0.parameters.costN = 1 << 40 },
        Hostile(name: "N = 2^21", expected: "outside 1024...1048576") { $0.parameters.costN = 1 << 21 },
        Hostile(name: "N = Int.max", expected: "outside") { $0.parameters.costN = .max },
        Hostile(name: "N = 0", expected: "outside") { $0.parameters.costN = 0 },
        Hostile(name: "N = -1024", expected: "outside") { $0.parameters.costN = -1024 },
        Hostile(name: "N = 2^9", expected: "outside") { $0.parameters.costN = 1 << 9 },
        Hostile(name: "N = 3000", expected: "not a power of two") { $0.parameters.costN = 3000 },
        Hostile(name: "r = 0", expected: "block size r = 0") { $0.parameters.blockSizeR = 0 },
        Hostile(name: "r = -8", expected: "block size r = -8") { $0.parameters.blockSizeR = -8 },
        Hostile(name: "r = 17", expected: "block size r = 17") { $0.parameters.blockSizeR = 17 },
        Hostile(name: "r = Int.max", expected: "block size r") { $0.parameters.blockSizeR = .max },
        Hostile(name: "p = 0", expected: "parallelism p = 0") { $0.parameters.parallelismP = 0 },
        Hostile(name: "p = 17", expected: "parallelism p = 17") { $0.parameters.parallelismP = 17 },
        Hostile(name: "p = Int.min", expected: "parallelism p") { $0.parameters.parallelismP = .min },
        Hostile(name: "r = 1 with N = 2^16", expected: "below 2^(16·r)") {
            $0.parameters.blockSizeR = 1
            $0.parameters.costN = 1 << 16
        },
        Hostile(name: "1 GiB: N = 2^20, r = 8", expected: "more memory") { $0.parameters.costN = 1 << 20 },
        Hostile(name: "N·r·p = 2^25", expected: "more work") {
            $0.parameters.costN = 1 << 17
            $0.parameters.blockSizeR = 16
            $0.parameters.parallelismP = 16
        },
        Hostile(name: "empty salt", expected: "salt is 0 bytes long, not 32") { $0.salt = Data() },
        Hostile(name: "31-byte salt", expected: "salt is 31 bytes long, not 32") { $0.salt = $0.salt.dropLast() },
        Hostile(name: "33-byte salt", expected: "salt is 33 bytes long, not 32") { $0.salt.append(0) },
        Hostile(name: "key version 0", expected: "account key version 0") { $0.keyVersion = 0 },
        Hostile(name: "key version -1", expected: "account key version -1") { $0.keyVersion = -1 },
        Hostile(name: "key version 2^32", expected: "account key version 4294967296") { $0.keyVersion = 1 << 32 },
        Hostile(name: "empty verifier", expected: "verifier is 0 bytes long") { $0.verifier = Data() },
        Hostile(name: "short verifier", expected: "verifier is") { $0.verifier = $0.verifier.dropLast() },
        Hostile(name: "long verifier", expected: "verifier is") { $0.verifier.append(contentsOf: [0, 0]) },
    ]

    @Test(arguments: hostile)
    func hostileSettingsAreRefusedBeforeAnyDerivation(_ hostile: Hostile) throws {
        let (settings, _) = try TestAccount.make()
        var raw = try Self.raw(settings)
        hostile.change(&raw)
        let error = #expect(throws: EncryptionError.self) { try Self.decode(raw) }
        #expect(error?.code == .invalidSettings)
        #expect(error?.message.contains(hostile.expected) == true, "\(error?.message ?? "no error")")
        #expect(error?.message.contains("update the app, or reset encrypted data") == true)
    }

    @Test func hostileParametersAreRefusedWhenGivenInCodeToo() {
        let error = #expect(throws: EncryptionError.self) {
            try ScryptParameters(costN: 1 << 40, blockSizeR: 8, parallelismP: 1)
        }
        #expect(error?.code == .invalidSettings)
        #expect(error?.message.contains("scrypt cost N = 1099511627776 is outside") == true)
    }

    @Test func settingsWithNumbersTooLargeForAnIntAreRefused() throws {
        let (settings, _) = try TestAccount.make()
        var json = String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
        json = json.replacingOccurrences(of: "\"costN\":1024", with: "\"costN\":1e300")
        #expect(json.contains("1e300"))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(EncryptionSettings.self, from: Data(json.utf8))
        }
    }

    @Test func settingsWithMissingPartsAreRefused() throws {
        let json = #"{"salt":"AAAA","keyVersion":1}"#
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(EncryptionSettings.self, from: Data(json.utf8))
        }
    }

    @Test func theLargestAcceptedShapesDeriveWithoutError() throws {
        // The corners of what ScryptParameters accepts must be ones BoringSSL accepts too: r = 16 with p = 1
        // needs the spare page swift-crypto adds, and r = 1 the largest N below 2^16.
        let corners = [(1 << 10, 16, 1), (1 << 10, 16, 16), (1 << 15, 1, 1), (1 << 10, 1, 16)]
        for (costN, blockSizeR, parallelismP) in corners {
            let parameters = try ScryptParameters(costN: costN, blockSizeR: blockSizeR, parallelismP: parallelismP)
            let (settings, _) = try EncryptionSettings.create(passphrase: "corner", parameters: parameters)
            #expect(settings.parameters == parameters)
        }
    }

    @Test func defaultParametersAreScryptsInteractiveFigures() throws {
        let parameters = ScryptParameters.default
        #expect(parameters.costN == 1 << 15)
        #expect(parameters.blockSizeR == 8)
        #expect(parameters.parallelismP == 1)
        let (settings, _) = try EncryptionSettings.create(passphrase: "default cost")
        #expect(settings.parameters == .default)
    }
}
