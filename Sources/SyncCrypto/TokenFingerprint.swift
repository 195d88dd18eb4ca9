import Crypto
import Foundation

/// A one-way fingerprint of a bearer token (SHA-256, hexadecimal): what a device keeps to recognise the
/// token it already checked with the server, without keeping the token itself a second time.
public enum TokenFingerprint {
    public static func of(_ token: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in SHA256.hash(data: Data(token.utf8)) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
