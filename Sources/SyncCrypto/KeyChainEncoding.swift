import Foundation

/// The plaintext of a wrapped ``ZoneKeyChain``: a small length-prefixed encoding, the same under every
/// wrapping (account key, a participant's public key, an invitation's secret).
///
/// Layout (integers big-endian): key count (UInt32), each key as version (UInt32) and its 32 bytes;
/// holder count (UInt32), each holder as length (UInt32) and UTF-8; a byte 0 or 1, then (if 1) the pinned
/// owner key's 32 bytes; a byte 0 or 1, then (if 1) the share token as length (UInt32) and UTF-8. Nothing
/// may follow. Decoding refuses anything else, although it only ever reads what AES-GCM authenticated.
enum KeyChainEncoding {
    /// The longest holder name or share token read.
    static let maximumStringByteCount = 1024

    static func encode(_ chain: ZoneKeyChain) -> Data {
        var bytes = Data()
        SealedBytes.append(UInt32(chain.keys.count), to: &bytes)
        for key in chain.keys {
            SealedBytes.append(UInt32(key.version), to: &bytes)
            bytes.append(key.rawBytes)
        }
        SealedBytes.append(UInt32(chain.holders.count), to: &bytes)
        for holder in chain.holders.sorted() { append(holder, to: &bytes) }
        if let pinned = chain.pinnedOwnerKey {
            bytes.append(1)
            bytes.append(pinned)
        } else {
            bytes.append(0)
        }
        if let token = chain.shareToken {
            bytes.append(1)
            append(token, to: &bytes)
        } else {
            bytes.append(0)
        }
        return bytes
    }

    /// The chain `data` encodes; nil when it is not exactly one well-formed encoding.
    static func decode(_ data: Data) -> ZoneKeyChain? {
        var reader = Reader(bytes: [UInt8](data))
        guard let keyCount = reader.uint32(), keyCount >= 1, keyCount <= ZoneKeyChain.maximumVersions else {
            return nil
        }
        var keys: [ZoneKey] = []
        for _ in 0..<keyCount {
            guard let version = reader.uint32(), let raw = reader.bytes(32),
                let key = try? ZoneKey(rawBytes: Data(raw), version: Int(version))
            else { return nil }
            keys.append(key)
        }
        guard let holderCount = reader.uint32(), holderCount <= 10_000 else { return nil }
        var holders: Set<String> = []
        for _ in 0..<holderCount {
            guard let holder = reader.string() else { return nil }
            holders.insert(holder)
        }
        var pinned: Data?
        switch reader.byte() {
        case 0: pinned = nil
        case 1:
            guard let raw = reader.bytes(AccountIdentityKey.publicKeyByteCount) else { return nil }
            pinned = Data(raw)
        default: return nil
        }
        var token: String?
        switch reader.byte() {
        case 0: token = nil
        case 1:
            guard let text = reader.string() else { return nil }
            token = text
        default: return nil
        }
        guard reader.isAtEnd else { return nil }
        return try? ZoneKeyChain(keys: keys, holders: holders, pinnedOwnerKey: pinned, shareToken: token)
    }

    private static func append(_ string: String, to bytes: inout Data) {
        SealedBytes.append(UInt32(string.utf8.count), to: &bytes)
        bytes.append(contentsOf: string.utf8)
    }

    /// Reads the encoding front to back; every read is nil past the end.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func uint32() -> UInt32? {
            guard bytes.count - offset >= 4 else { return nil }
            defer { offset += 4 }
            return SealedBytes.uint32(in: bytes, at: offset)
        }

        mutating func bytes(_ count: Int) -> ArraySlice<UInt8>? {
            guard bytes.count - offset >= count else { return nil }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func string() -> String? {
            guard let length = uint32(), length <= maximumStringByteCount, let raw = bytes(Int(length)),
                let text = String(validating: raw, as: UTF8.self)
            else { return nil }
            return text
        }
    }
}
