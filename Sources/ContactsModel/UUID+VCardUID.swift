import Crypto
import Foundation

extension UUID {
    /// The contact ID of a card whose UID is not a UUID (`mailto:ann@example.com`, `4f3a…@host`): the first
    /// 16 bytes of the UID's SHA-256, as a version 8 UUID. The same UID gives the same ID on every device
    /// and at every import, so a card imported or `PUT` again updates its contact instead of adding one,
    /// and no one can choose a UID that lands on another card's ID.
    public init(vCardUID uid: String) {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let digest = SHA256.hash(data: Data("vCard UID\u{0}".utf8) + Data(uid.utf8))
        withUnsafeMutableBytes(of: &uuid) { bytes in
            for (index, byte) in digest.prefix(16).enumerated() { bytes[index] = byte }
            bytes[6] = bytes[6] & 0x0F | 0x80  // version 8 (RFC 9562: custom)
            bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
        }
        self.init(uuid: uuid)
    }
}
