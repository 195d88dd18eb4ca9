import Crypto
import Foundation

/// A one-way fingerprint of a bearer token (SHA-256, hexadecimal): what a device keeps to recognise the
/// token it already checked with the server, without keeping the token itself a second time.
public enum TokenFingerprint {
    public static func of(_ token: String) -> String {
        lowercaseHexadecimal(SHA256.hash(data: Data(token.utf8)))
    }
}
