import ContactsModel
import Foundation

/// Writes the store's binary forms (``ContactFormat``, ``CompactContactForm``, ``StoredServerRecord``):
/// integers little-endian, strings and byte strings as a UInt32 byte count (or a varint) and the bytes, UUIDs as their 16 bytes, dates as the bit
/// pattern of their `timeIntervalSinceReferenceDate` (exact).
struct StoredBytesWriter {
    var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    var data: Data { Data(bytes) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func count(_ value: Int) {
        withUnsafeBytes(of: UInt32(value).littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func int64(_ value: Int64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ value: String) {
        count(value.utf8.count)
        bytes.append(contentsOf: value.utf8)
    }

    mutating func byteString(_ value: some Collection<UInt8>) {
        count(value.count)
        bytes.append(contentsOf: value)
    }

    /// An unsigned LEB128 varint: 7 bits a byte, low bits first, the high bit set on all bytes but the last.
    mutating func varint(_ value: Int) {
        var rest = UInt64(value)
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// Bytes after their count as a varint.
    mutating func varintString(_ value: some Collection<UInt8>) {
        varint(value.count)
        bytes.append(contentsOf: value)
    }

    mutating func varintString(_ value: String) {
        varintString(value.utf8)
    }

    mutating func uuid(_ value: UUID) {
        withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) }
    }

    mutating func date(_ value: Date) {
        withUnsafeBytes(of: value.timeIntervalSinceReferenceDate.bitPattern.littleEndian) {
            bytes.append(contentsOf: $0)
        }
    }
}

/// Reads what ``StoredBytesWriter`` wrote; anything cut short or counted beyond the bytes is a damaged row
/// (``ContactsModel/ContactError/damagedRow(offset:)``), never a crash or a huge allocation.
struct StoredBytesReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int

    var isAtEnd: Bool { offset == bytes.count }

    private mutating func fixedWidth<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let size = MemoryLayout<T>.size
        guard bytes.count - offset >= size else { throw damaged() }
        defer { offset += size }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    mutating func byte() throws -> UInt8 { try fixedWidth(UInt8.self) }

    mutating func int64() throws -> Int64 { try fixedWidth(Int64.self) }

    mutating func count() throws -> Int {
        let count = Int(try fixedWidth(UInt32.self))
        // Each item takes at least 4 bytes, so a count the rest cannot hold is damage, not a huge list.
        guard count <= (bytes.count - offset) / 4 + 1 else { throw damaged() }
        return count
    }

    mutating func string() throws -> String {
        String(decoding: try slice(), as: UTF8.self)
    }

    mutating func byteString() throws -> Data {
        Data(try slice())
    }

    mutating func date() throws -> Date {
        Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixedWidth(UInt64.self)))
    }

    mutating func uuid() throws -> UUID {
        guard bytes.count - offset >= 16 else { throw damaged() }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) {
            $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 16]))
        }
        offset += 16
        return UUID(uuid: uuid)
    }

    /// A varint no larger than a UInt32 (what the fixed-width counts can say).
    mutating func varint() throws -> Int {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try self.byte()
            value |= UInt64(byte & 0x7F) << shift
            guard value <= UInt64(UInt32.max) else { throw damaged() }
            if byte < 0x80 { return Int(value) }
            shift += 7
            guard shift < 35 else { throw damaged() }
        }
    }

    /// Bytes after their count as a varint, in place.
    mutating func varintSlice() throws -> UnsafeRawBufferPointer {
        try fixed(try varint())
    }

    mutating func varintString() throws -> String {
        String(decoding: try varintSlice(), as: UTF8.self)
    }

    /// A string's or byte string's bytes, in place.
    mutating func slice() throws -> UnsafeRawBufferPointer {
        try fixed(Int(try fixedWidth(UInt32.self)))
    }

    /// The next `length` bytes, in place.
    mutating func fixed(_ length: Int) throws -> UnsafeRawBufferPointer {
        guard length >= 0, bytes.count - offset >= length else { throw damaged() }
        defer { offset += length }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
    }

    func damaged() -> ContactError {
        .damagedRow(offset: offset)
    }
}
