import Foundation
import SyncCore

/// A value a record field can hold: the counterpart of `CKRecordValueProtocol`.
///
/// Strings, integers of every width, `Double`, `Float`, `Bool`, `Date`, `Data`, `Record.Reference`,
/// `NSNumber` and arrays of these can be written with `record[key] = value`. Reading gives back
/// what CloudKit gives back: `String`, `Date`, `Data`, `Record.Reference`, arrays of them, and
/// `NSNumber` for numbers and booleans, so that `as? Int`, `as? Int64`, `as? Double` and
/// `as? Bool` all work on the same field.
public protocol RecordValueProtocol: Sendable {
    /// The value as it is stored and sent.
    var recordFieldValue: FieldValue { get }
}

extension String: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .string(self) }
}

extension Date: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .date(self) }
}

extension Data: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .bytes(self) }
}

extension RecordValue.Reference: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .reference(self) }
}

/// An uploaded asset as a record field names it; reading the field gives back an ``Asset``.
extension AssetReference: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .asset(self) }
}

extension Double: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .double(self) }
}

extension Float: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .double(Double(self)) }
}

/// Booleans are stored as the integers 0 and 1, as CloudKit stores them.
extension Bool: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .int64(self ? 1 : 0) }
}

extension Int: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
}

extension Int8: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
}

extension Int16: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
}

extension Int32: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
}

extension Int64: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .int64(self) }
}

extension UInt8: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
}

extension UInt16: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
}

extension UInt32: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .int64(Int64(self)) }
}

/// A whole number that fits an `Int64` is stored as an integer, anything else (fractions,
/// -0.0, infinities) as a double.
extension NSNumber: RecordValueProtocol {
    public var recordFieldValue: FieldValue {
        let double = doubleValue
        // -0.0 equals 0 but is a double; whole numbers beyond 2^53 are compared through Int64 exactly.
        return Double(int64Value) == double && !(double == 0 && double.sign == .minus)
            ? .int64(int64Value) : .double(double)
    }
}

extension Array: RecordValueProtocol where Element: RecordValueProtocol {
    public var recordFieldValue: FieldValue { .list(map(\.recordFieldValue)) }
}

extension FieldValue {
    /// The value as CloudKit hands it back from `record[key]`: numbers as `NSNumber`, lists as
    /// arrays of one element type.
    public var recordValue: any RecordValueProtocol {
        switch self {
        case .string(let value): value
        case .int64(let value): NSNumber(value: value)
        case .double(let value): NSNumber(value: value)
        case .date(let value): value
        case .bytes(let value): value
        case .reference(let value): value
        case .list(let elements): Self.listValue(elements)
        case .asset(let value): Asset(reference: value)
        // Ciphertext no keyring opened (a Database opens every one it receives, or throws).
        case .encrypted(let sealed): sealed
        }
    }

    /// A list as an array of its elements' type (numbers as `[NSNumber]`), so that `as? [String]`,
    /// `as? [Int]` and the like work. An empty list reads as `[String]`, which casts to any array.
    private static func listValue(_ elements: [FieldValue]) -> any RecordValueProtocol {
        func all<T>(_ transform: (FieldValue) -> T?) -> [T]? {
            var result: [T] = []
            result.reserveCapacity(elements.count)
            for element in elements {
                guard let value = transform(element) else { return nil }
                result.append(value)
            }
            return result
        }
        if let strings = all(\.stringValue) { return strings }
        if let numbers = all({ $0.int64Value.map(NSNumber.init(value:)) ?? $0.doubleValue.map(NSNumber.init(value:)) })
        {
            return numbers
        }
        if let dates = all(\.dateValue) { return dates }
        if let bytes = all(\.bytesValue) { return bytes }
        if let references = all(\.referenceValue) { return references }
        if let assets = all({ $0.assetValue.map(Asset.init(reference:)) }) { return assets }
        // Lists of lists are not CloudKit types; hand back the strings of what can be read.
        return elements.compactMap(\.stringValue)
    }
}
