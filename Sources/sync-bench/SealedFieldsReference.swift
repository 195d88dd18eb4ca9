import Crypto
import Foundation
import SyncCore
import SyncCrypto

/// AES-GCM alone, for the sealed fields a `sync-bench contacts` run's upload seals and its first download opens:
/// one seal, and one open, per encrypted field of every record the download fetched, of the same size, with
/// associated data as long as the app's, under a 256-bit key as zone keys are. What the app does beside
/// (encoding each value, building its context, finding the key) is not counted.
struct SealedFieldsReference {
    /// One encrypted field: the sizes AES-GCM works on.
    struct Field {
        /// What is sealed: the record's version and the value's bytes (`FieldCipher`'s plaintext).
        var plaintext: Int
        /// The associated data.
        var context: Int
    }

    var fields: [Field]

    /// Bytes of a sealed field beyond its plaintext: `FieldCipher`'s format byte and key version (5), AES-GCM's
    /// nonce (12) and tag (16).
    static let overhead = 5 + 12 + 16

    /// Fields sealed and opened at a time: what they hold is made before the clock starts, a chunk at a time,
    /// so that a million contacts' fields are never held at once.
    private static let chunk = 10_000

    /// The encrypted fields of every record in the answers of the download's zone-change fetches.
    init(download: [RecordedTraffic.Exchange]) throws {
        let fetch = Endpoint.fetchZoneChanges.path(.private)
        fields = []
        for exchange in download where exchange.path == fetch {
            let page = try JSONReader.decode(FetchZoneChangesResponse.self, from: Data(contentsOf: exchange.response))
            for record in page.modifications {
                for (name, value) in record.fields {
                    guard let sealed = value.encryptedValue else { continue }
                    fields.append(
                        Field(
                            plaintext: sealed.count - Self.overhead,
                            context: Self.contextLength(
                                recordType: record.recordType, recordName: record.recordID.recordName,
                                zoneName: record.recordID.zoneID.zoneName, fieldName: name)))
                }
            }
        }
    }

    /// The length of `FieldCipher`'s associated data for a field: its purpose label, the format byte, the record
    /// type, record name, zone name, owner name and field name, each after its length (8 bytes), and the key
    /// version (4 bytes).
    static func contextLength(recordType: String, recordName: String, zoneName: String, fieldName: String) -> Int {
        let strings = ["SyncCrypto.field", recordType, recordName, zoneName, RecordZone.ID.defaultOwnerName, fieldName]
        return strings.reduce(1 + 4) { $0 + 8 + $1.utf8.count }
    }

    /// The seconds sealing every field took, and opening them again.
    func measure() throws -> (seal: Double, open: Double) {
        let key = SymmetricKey(size: .bits256)
        let largest = fields.map { max($0.plaintext, $0.context) }.max() ?? 0
        var random = SystemRandomNumberGenerator()
        let bytes = Data((0..<largest).map { _ in UInt8.random(in: .min ... .max, using: &random) })
        var seal = Duration.zero
        var open = Duration.zero
        for start in stride(from: 0, to: fields.count, by: Self.chunk) {
            let chunk = fields[start..<min(start + Self.chunk, fields.count)]
            let values = chunk.map { Data(bytes.prefix($0.plaintext)) }
            let contexts = chunk.map { Data(bytes.suffix($0.context)) }
            var clock = ContinuousClock.now
            let sealed = try zip(values, contexts).map { value, context in
                try AES.GCM.seal(value, using: key, nonce: NonceSource.next(), authenticating: context).combined!
            }
            seal += ContinuousClock.now - clock
            clock = ContinuousClock.now
            var opened = 0
            for (box, context) in zip(sealed, contexts) {
                opened += try AES.GCM.open(AES.GCM.SealedBox(combined: box), using: key, authenticating: context).count
            }
            open += ContinuousClock.now - clock
            guard opened == values.reduce(0, { $0 + $1.count }) else {
                throw BenchError(description: "AES-GCM opened \(opened) bytes of fields it sealed differently")
            }
        }
        return (seal.inSeconds, open.inSeconds)
    }
}
