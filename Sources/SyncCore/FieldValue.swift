import Foundation

/// A typed value stored in a record field.
///
/// The types are CloudKit's: strings, 64-bit integers, doubles, dates, bytes, references
/// and homogeneous lists of these. Dates travel and are stored with millisecond precision,
/// as in CloudKit.
///
/// On the wire a value is an object with a `type` and a `value`:
/// `{"type": "string", "value": "Ada"}`, `{"type": "date", "value": 1700000000000}` (milliseconds
/// since 1970), `{"type": "bytes", "value": "AAEC"}` (base64), `{"type": "list", "value": [...]}`.
public enum FieldValue: Sendable, Hashable {
    case string(String)
    case int64(Int64)
    case double(Double)
    case date(Date)
    case bytes(Data)
    case reference(Record.Reference)
    case list([FieldValue])

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
    public var referenceValue: Record.Reference? {
        if case .reference(let value) = self { return value }
        return nil
    }

    /// The elements, if this is a list value.
    public var listValue: [FieldValue]? {
        if case .list(let value) = self { return value }
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
    /// Milliseconds since 1970, the precision CloudKit stores dates with.
    public var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded())
    }

    /// Creates a date from milliseconds since 1970.
    public init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// The date rounded to the millisecond, as the server will store it.
    public var roundedToMilliseconds: Date {
        Date(millisecondsSince1970: millisecondsSince1970)
    }
}

extension FieldValue: Codable {
    private enum CodingKeys: String, CodingKey {
        case type, value
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "string": self = .string(try container.decode(String.self, forKey: .value))
        case "int64": self = .int64(try container.decode(Int64.self, forKey: .value))
        case "double": self = .double(try container.decode(Double.self, forKey: .value))
        case "date":
            self = .date(Date(millisecondsSince1970: try container.decode(Int64.self, forKey: .value)))
        case "bytes":
            let text = try container.decode(String.self, forKey: .value)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .value, in: container, debugDescription: "bytes must be base64")
            }
            self = .bytes(data)
        case "reference": self = .reference(try container.decode(Record.Reference.self, forKey: .value))
        case "list": self = .list(try container.decode([FieldValue].self, forKey: .value))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container,
                debugDescription:
                    "unknown field type '\(type)'; use string, int64, double, date, bytes, reference or list")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(typeName, forKey: .type)
        switch self {
        case .string(let value): try container.encode(value, forKey: .value)
        case .int64(let value): try container.encode(value, forKey: .value)
        case .double(let value): try container.encode(value, forKey: .value)
        case .date(let value): try container.encode(value.millisecondsSince1970, forKey: .value)
        case .bytes(let value): try container.encode(value.base64EncodedString(), forKey: .value)
        case .reference(let value): try container.encode(value, forKey: .value)
        case .list(let value): try container.encode(value, forKey: .value)
        }
    }
}
