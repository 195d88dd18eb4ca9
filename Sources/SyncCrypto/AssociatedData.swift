import Foundation

/// An unambiguous byte encoding of the context a ciphertext belongs to, authenticated (not encrypted) by
/// AES-GCM.
///
/// Every variable-length part is preceded by its length (UInt64, big-endian), and integers have a fixed
/// width, so no two different contexts encode to the same bytes: ("ab", "c") and ("a", "bc") differ.
/// Each encoding starts with a purpose label, so that bytes sealed for one use never open in another.
struct AssociatedData {
    /// The encoding so far. An array rather than `Data`: it is built from many small appends, once per value
    /// sealed or opened.
    private(set) var bytes: [UInt8] = []

    /// Starts an encoding for one purpose (a fixed label such as "SyncCrypto.field").
    init(purpose: String) {
        bytes.reserveCapacity(128)
        append(purpose)
    }

    mutating func append(_ string: String) {
        append(UInt64(string.utf8.count))
        bytes.append(contentsOf: string.utf8)
    }

    mutating func append(_ data: Data) {
        append(UInt64(data.count))
        bytes.append(contentsOf: data)
    }

    mutating func append(_ value: UInt8) {
        bytes.append(value)
    }

    mutating func append(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }
}
