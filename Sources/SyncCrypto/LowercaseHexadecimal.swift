/// A digest as lowercase hexadecimal digits, two a byte (SyncCore's `Hexadecimal`, which this module,
/// depending on swift-crypto only, does not import).
func lowercaseHexadecimal(_ digest: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(64)
    for byte in digest {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}
