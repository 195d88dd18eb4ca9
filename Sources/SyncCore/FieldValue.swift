import Foundation

/// A typed value stored in a record field.
///
/// The types are CloudKit's: strings, 64-bit integers, doubles, dates, bytes, references
/// and homogeneous lists of these. Every value comes back `==` to the one saved: doubles travel
/// in their shortest round-trip form, and a date carries, beside CloudKit's milliseconds, its
/// exact `Date` value.
///
/// On the wire a value is an object with a `type` and a `value`:
/// `{"type": "string", "value": "Ada"}`, `{"type": "bytes", "value": "AAEC"}` (base64),
/// `{"type": "list", "value": [...]}`, and `{"type": "date", "value": 1700000000000,
/// "exact": 721692800.0004}`: milliseconds since 1970, and optionally the exact seconds since
/// 2001 (`Date.timeIntervalSinceReferenceDate`), which readers prefer and which must lie within
/// a millisecond of `value`.
///
/// An `asset` value, `{"type": "asset", "value": {"assetID": "…", "size": 52311, "key": "<base64>"}}`,
/// names bytes uploaded to the server apart from the record (``AssetReference``, CloudKit's `CKAsset`).
///
/// An `encrypted` value, `{"type": "encrypted", "value": "<base64>"}`, is a field sealed on the
/// device (a record's `encryptedValues`): ciphertext the server stores and returns unchanged and
/// cannot read. It is only ever a record's top-level field value, never inside a list (the client
/// seals a whole list into one value), and never empty.
public enum FieldValue: Sendable, Hashable {
    case string(String)
    case int64(Int64)
    case double(Double)
    case date(Date)
    case bytes(Data)
    case reference(RecordValue.Reference)
    case list([FieldValue])
    /// Bytes uploaded apart from the record (CloudKit's `CKAsset`).
    case asset(AssetReference)
    /// Ciphertext sealed on a device; opaque to the server, which stores and returns it unchanged.
    case encrypted(Data)

    /// The wire name of the value's type.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .int64: "int64"
        case .double: "double"
        case .date: "date"
        case .bytes: "bytes"
        case .reference: "reference"
        case .list: "list"
        case .asset: "asset"
        case .encrypted: "encrypted"
        }
    }

    /// The string, if this is a string value.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is an int64 value.
    public var int64Value: Int64? {
        if case .int64(let value) = self { return value }
        return nil
    }

    /// The double, if this is a double value.
    public var doubleValue: Double? {
        if case .double(let value) = self { return value }
        return nil
    }

    /// The date, if this is a date value.
    public var dateValue: Date? {
        if case .date(let value) = self { return value }
        return nil
    }

    /// The bytes, if this is a bytes value.
    public var bytesValue: Data? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    /// The reference, if this is a reference value.
    public var referenceValue: RecordValue.Reference? {
        if case .reference(let value) = self { return value }
        return nil
    }

    /// The elements, if this is a list value.
    public var listValue: [FieldValue]? {
        if case .list(let value) = self { return value }
        return nil
    }

    /// The asset, if this is an asset value.
    public var assetValue: AssetReference? {
        if case .asset(let value) = self { return value }
        return nil
    }

    /// Whether the value names an asset: an asset, or a list of assets (lists hold one type, so the
    /// first element tells). Cheap: saves ask it of every field.
    public var namesAsset: Bool {
        switch self {
        case .asset: true
        case .list(let elements): elements.first?.assetValue != nil
        default: false
        }
    }

    /// The assets the value names: itself, or the elements of a list of assets.
    public var assetReferences: [AssetReference] {
        switch self {
        case .asset(let reference): [reference]
        case .list(let elements): elements.compactMap(\.assetValue)
        default: []
        }
    }

    /// The ciphertext, if this is an encrypted value.
    public var encryptedValue: Data? {
        if case .encrypted(let value) = self { return value }
        return nil
    }
}

extension FieldValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension FieldValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int64(value) }
}

extension FieldValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension Date {
    /// The milliseconds since 1970 a date may hold on the wire: ECMAScript's time range,
    /// ±8.64e15 ms (about 273,790 years either side of 1970). A `Double` holds every one of them
    /// exactly, so a date read from the wire converts back to the same integer.
    public static let wireMillisecondsRange: ClosedRange<Int64> = -8_640_000_000_000_000...8_640_000_000_000_000

    /// Milliseconds since 1970, the precision CloudKit stores dates with.
    ///
    /// A date outside ``wireMillisecondsRange`` gives the nearer end of the range (and a date that
    /// is not a number gives 0), so that the conversion never traps; dates read from the wire are
    /// checked against the range where they are decoded and never need that.
    public var millisecondsSince1970: Int64 {
        let milliseconds = (timeIntervalSince1970 * 1000).rounded()
        if milliseconds.isNaN { return 0 }
        let range = Self.wireMillisecondsRange
        if milliseconds <= Double(range.lowerBound) { return range.lowerBound }
        if milliseconds >= Double(range.upperBound) { return range.upperBound }
        return Int64(milliseconds)
    }

    /// Creates a date from milliseconds since 1970.
    public init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Creates a date from milliseconds since 1970 read from the wire, or `nil` when they are
    /// outside ``wireMillisecondsRange``.
    public init?(checkedMillisecondsSince1970 milliseconds: Int64) {
        guard Self.wireMillisecondsRange.contains(milliseconds) else { return nil }
        self.init(millisecondsSince1970: milliseconds)
    }

    /// Why `milliseconds` cannot be a date, for error messages.
    static func outOfRange(milliseconds: Int64) -> String {
        "\(milliseconds) is out of range for a date; send milliseconds since 1970 from \(wireMillisecondsRange.lowerBound) to \(wireMillisecondsRange.upperBound)"
    }

    /// The date rounded to the millisecond, as CloudKit stores it.
    public var roundedToMilliseconds: Date {
        Date(millisecondsSince1970: millisecondsSince1970)
    }

    /// The date a wire date value stands for: `exact` seconds since 2001 when sent, else
    /// `milliseconds` since 1970. `nil` when the milliseconds are out of range, or `exact` is not
    /// a finite number within a millisecond of them (the two would disagree about the date).
    public init?(wireMilliseconds milliseconds: Int64, exact: Double?) {
        guard let rounded = Date(checkedMillisecondsSince1970: milliseconds) else { return nil }
        guard let exact else {
            self = rounded
            return
        }
        guard exact.isFinite else { return nil }
        let date = Date(timeIntervalSinceReferenceDate: exact)
        guard abs(date.timeIntervalSince1970 * 1000 - Double(milliseconds)) <= 1 else { return nil }
        self = date
    }

    /// Why a wire date was refused, for error messages.
    static func refused(milliseconds: Int64, exact: Double?) -> String {
        guard Date(checkedMillisecondsSince1970: milliseconds) != nil else {
            return outOfRange(milliseconds: milliseconds)
        }
        return
            "exact \(exact.map { "\($0)" } ?? "") does not match \(milliseconds) ms; send exact as the same date in seconds since 2001, or leave it out"
    }
}

extension FieldValue: Codable {
    private enum CodingKeys: String, CodingKey {
        case type, value, exact
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "string": self = .string(try container.decode(String.self, forKey: .value))
        case "int64": self = .int64(try container.decode(Int64.self, forKey: .value))
        case "double":
            let number = try container.decode(Double.self, forKey: .value)
            // JSONReader never yields infinity or NaN; other decoders may be configured to.
            guard number.isFinite else {
                throw DecodingError.dataCorruptedError(
                    forKey: .value, in: container, debugDescription: "a double must be a finite number")
            }
            self = .double(number)
        case "date":
            let milliseconds = try container.decode(Int64.self, forKey: .value)
            let exact = try container.decodeIfPresentNotNull(Double.self, forKey: .exact)
            guard let date = Date(wireMilliseconds: milliseconds, exact: exact) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .value, in: container,
                    debugDescription: Date.refused(milliseconds: milliseconds, exact: exact))
            }
            self = .date(date)
        case "bytes":
            let text = try container.decode(String.self, forKey: .value)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .value, in: container, debugDescription: "bytes must be base64")
            }
            self = .bytes(data)
        case "reference": self = .reference(try container.decode(RecordValue.Reference.self, forKey: .value))
        case "list": self = .list(try container.decode([FieldValue].self, forKey: .value))
        case "asset": self = .asset(try container.decode(AssetReference.self, forKey: .value))
        case "encrypted":
            let text = try container.decode(String.self, forKey: .value)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .value, in: container, debugDescription: "an encrypted value must be base64")
            }
            // Sealing always yields bytes; an empty value can only be a broken client's.
            guard !data.isEmpty else {
                throw DecodingError.dataCorruptedError(
                    forKey: .value, in: container,
                    debugDescription: "an encrypted value is empty; send the ciphertext the device sealed")
            }
            self = .encrypted(data)
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container,
                debugDescription:
                    "unknown field type '\(type)'; use string, int64, double, date, bytes, reference, list, asset or encrypted"
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(typeName, forKey: .type)
        switch self {
        case .string(let value): try container.encode(value, forKey: .value)
        case .int64(let value): try container.encode(value, forKey: .value)
        case .double(let value): try container.encode(value, forKey: .value)
        case .date(let value):
            try container.encode(value.millisecondsSince1970, forKey: .value)
            if value.timeIntervalSinceReferenceDate.isFinite {
                try container.encode(value.timeIntervalSinceReferenceDate, forKey: .exact)
            }
        case .bytes(let value): try container.encode(value.base64EncodedString(), forKey: .value)
        case .reference(let value): try container.encode(value, forKey: .value)
        case .list(let value): try container.encode(value, forKey: .value)
        case .asset(let value): try container.encode(value, forKey: .value)
        case .encrypted(let value): try container.encode(value.base64EncodedString(), forKey: .value)
        }
    }
}
