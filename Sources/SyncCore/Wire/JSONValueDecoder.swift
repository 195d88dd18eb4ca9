import Foundation

/// Decodes any `Decodable` from a parsed ``JSONReader/Value`` tree, with errors that name where
/// in the body the problem is.
///
/// It stands in for `JSONDecoder` on the wire, for two reasons: `JSONDecoder` reports a number it
/// cannot represent (`1e999`, `9223372036854775808` or `1.5` where an integer belongs) as "not
/// valid JSON" with no path, and it rounds or overflows silently in places. Here every number is
/// read from its text for the exact type asked for: integers must be written as whole numbers in
/// the type's range, and floating-point numbers must be finite.
struct JSONValueDecoder: Decoder {
    let value: JSONReader.Value
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(value: JSONReader.Value, codingPath: [any CodingKey] = []) {
        self.value = value
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw Self.mismatch([String: Any].self, value, codingPath)
        }
        return KeyedDecodingContainer(Keyed<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw Self.mismatch([Any].self, value, codingPath)
        }
        return Unkeyed(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        Single(value: value, codingPath: codingPath)
    }

    // MARK: Scalars, shared by the three containers

    static func decode<T: Decodable>(_ type: T.Type, from value: JSONReader.Value, at path: [any CodingKey]) throws
        -> T
    {
        // Foundation's own types, decoded as JSONDecoder's default strategies do (their own
        // `Decodable` conformances expect other shapes).
        if type == Data.self {
            guard let data = Data(base64Encoded: try string(value, path)) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "expected base64 bytes"))
            }
            if let result = data as? T { return result }
        } else if type == Date.self {
            let date = Date(timeIntervalSinceReferenceDate: try floatingPoint(Double.self, value, path))
            if let result = date as? T { return result }
        } else if type == URL.self {
            guard let url = URL(string: try string(value, path)) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "expected a URL"))
            }
            if let result = url as? T { return result }
        }
        return try T(from: JSONValueDecoder(value: value, codingPath: path))
    }

    static func string(_ value: JSONReader.Value, _ path: [any CodingKey]) throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self, value, path) }
        return text
    }

    static func bool(_ value: JSONReader.Value, _ path: [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, value, path) }
        return flag
    }

    /// An integer written as one (`-?[0-9]+`), within `T`'s range.
    static func integer<T: FixedWidthInteger>(_ type: T.Type, _ value: JSONReader.Value, _ path: [any CodingKey])
        throws -> T
    {
        guard case .number(let text) = value else { throw mismatch(T.self, value, path) }
        if let number = T(text) { return number }
        let isWhole = !text.contains { $0 == "." || $0 == "e" || $0 == "E" }
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: path,
                debugDescription: isWhole
                    ? "\(shown(text)) is out of range; expected a whole number from \(T.min) to \(T.max)"
                    : "\(shown(text)) is not a whole number; expected an integer from \(T.min) to \(T.max), written without a fraction or exponent"
            ))
    }

    /// A finite floating-point number (JSON's `1e999` would read as infinity).
    static func floatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(
        _ type: T.Type, _ value: JSONReader.Value, _ path: [any CodingKey]
    ) throws -> T {
        guard case .number(let text) = value else { throw mismatch(T.self, value, path) }
        guard let number = T(text), number.isFinite else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: path,
                    debugDescription: "\(shown(text)) is out of range; expected a finite number (at most about 1.8e308)"
                ))
        }
        return number
    }

    /// A number's text for a message, shortened if it is long.
    private static func shown(_ text: String) -> String {
        text.count > 40 ? "the number \(text.prefix(40))…" : "the number \(text)"
    }

    static func mismatch(_ type: Any.Type, _ value: JSONReader.Value, _ path: [any CodingKey]) -> DecodingError {
        if value == .null {
            return .valueNotFound(type, .init(codingPath: path, debugDescription: "found null"))
        }
        let found =
            switch value {
            case .object: "an object"
            case .array: "an array"
            case .string: "a string"
            case .number: "a number"
            case .bool: "true or false"
            case .null: "null"
            }
        return .typeMismatch(type, .init(codingPath: path, debugDescription: "found \(found)"))
    }

    // MARK: Containers

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let codingPath: [any CodingKey]
        /// The members in order, and an index for objects large enough to need one.
        let members: [(String, JSONReader.Value)]
        let index: [String: Int]?

        init(members: [(String, JSONReader.Value)], codingPath: [any CodingKey]) {
            self.members = members
            self.codingPath = codingPath
            // A linear search is fastest for the small objects most bodies are made of; a large
            // object (a record's fields) gets an index, so that decoding it stays linear.
            // The parser rejects duplicate keys, so every key is unique.
            index =
                members.count > 16
                ? Dictionary(
                    members.enumerated().map { ($0.element.0, $0.offset) }, uniquingKeysWith: { first, _ in first })
                : nil
        }

        var allKeys: [Key] { members.compactMap { Key(stringValue: $0.0) } }

        private func member(_ key: Key) -> JSONReader.Value? {
            if let index { return index[key.stringValue].map { members[$0].1 } }
            return members.first { $0.0 == key.stringValue }?.1
        }

        private func required(_ key: Key) throws -> JSONReader.Value {
            guard let value = member(key) else {
                throw DecodingError.keyNotFound(
                    key, .init(codingPath: codingPath, debugDescription: "no member '\(key.stringValue)'"))
            }
            return value
        }

        func contains(_ key: Key) -> Bool { member(key) != nil }

        func decodeNil(forKey key: Key) throws -> Bool { try required(key) == .null }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            try JSONValueDecoder.bool(try required(key), codingPath + [key])
        }
        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            try JSONValueDecoder.string(try required(key), codingPath + [key])
        }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            try JSONValueDecoder.floatingPoint(type, try required(key), codingPath + [key])
        }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
            try JSONValueDecoder.floatingPoint(type, try required(key), codingPath + [key])
        }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            try JSONValueDecoder.integer(type, try required(key), codingPath + [key])
        }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
            try JSONValueDecoder.integer(type, try required(key), codingPath + [key])
        }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
            try JSONValueDecoder.integer(type, try required(key), codingPath + [key])
        }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
            try JSONValueDecoder.integer(type, try required(key), codingPath + [key])
        }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            try JSONValueDecoder.integer(type, try required(key), codingPath + [key])
        }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
            try JSONValueDecoder.integer(type, try required(key), codingPath + [key])
        }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
            try JSONValueDecoder.integer(type, try required(key), codingPath + [key])
        }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
            try JSONValueDecoder.integer(type, try required(key), codingPath + [key])
        }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
            try JSONValueDecoder.integer(type, try required(key), codingPath + [key])
        }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
            try JSONValueDecoder.integer(type, try required(key), codingPath + [key])
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try JSONValueDecoder.decode(type, from: try required(key), at: codingPath + [key])
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try JSONValueDecoder(value: try required(key), codingPath: codingPath + [key]).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try JSONValueDecoder(value: try required(key), codingPath: codingPath + [key]).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            let key = JSONKey(stringValue: "super")
            return JSONValueDecoder(
                value: members.first { $0.0 == key.stringValue }?.1 ?? .null, codingPath: codingPath + [key])
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            JSONValueDecoder(value: member(key) ?? .null, codingPath: codingPath + [key])
        }
    }

    private struct Unkeyed: UnkeyedDecodingContainer {
        let elements: [JSONReader.Value]
        let codingPath: [any CodingKey]
        var currentIndex = 0

        init(elements: [JSONReader.Value], codingPath: [any CodingKey]) {
            self.elements = elements
            self.codingPath = codingPath
        }

        var count: Int? { elements.count }
        var isAtEnd: Bool { currentIndex >= elements.count }

        private mutating func next<T>(_ type: T.Type) throws -> (JSONReader.Value, [any CodingKey]) {
            let path = codingPath + [JSONKey(index: currentIndex)]
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    type, .init(codingPath: path, debugDescription: "the array has only \(elements.count) elements"))
            }
            defer { currentIndex += 1 }
            return (elements[currentIndex], path)
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd else { return false }
            if elements[currentIndex] == .null {
                currentIndex += 1
                return true
            }
            return false
        }

        mutating func decode(_ type: Bool.Type) throws -> Bool {
            let (value, path) = try next(type)
            return try JSONValueDecoder.bool(value, path)
        }
        mutating func decode(_ type: String.Type) throws -> String {
            let (value, path) = try next(type)
            return try JSONValueDecoder.string(value, path)
        }
        mutating func decode(_ type: Double.Type) throws -> Double {
            let (value, path) = try next(type)
            return try JSONValueDecoder.floatingPoint(type, value, path)
        }
        mutating func decode(_ type: Float.Type) throws -> Float {
            let (value, path) = try next(type)
            return try JSONValueDecoder.floatingPoint(type, value, path)
        }
        mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

        private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
            let (value, path) = try next(type)
            return try JSONValueDecoder.integer(type, value, path)
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let (value, path) = try next(type)
            return try JSONValueDecoder.decode(type, from: value, at: path)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            let (value, path) = try next([String: Any].self)
            return try JSONValueDecoder(value: value, codingPath: path).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let (value, path) = try next([Any].self)
            return try JSONValueDecoder(value: value, codingPath: path).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder {
            let (value, path) = try next(Any.self)
            return JSONValueDecoder(value: value, codingPath: path)
        }
    }

    private struct Single: SingleValueDecodingContainer {
        let value: JSONReader.Value
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool { value == .null }
        func decode(_ type: Bool.Type) throws -> Bool { try JSONValueDecoder.bool(value, codingPath) }
        func decode(_ type: String.Type) throws -> String { try JSONValueDecoder.string(value, codingPath) }
        func decode(_ type: Double.Type) throws -> Double {
            try JSONValueDecoder.floatingPoint(type, value, codingPath)
        }
        func decode(_ type: Float.Type) throws -> Float { try JSONValueDecoder.floatingPoint(type, value, codingPath) }
        func decode(_ type: Int.Type) throws -> Int { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: Int8.Type) throws -> Int8 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: Int16.Type) throws -> Int16 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: Int32.Type) throws -> Int32 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: Int64.Type) throws -> Int64 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: UInt.Type) throws -> UInt { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try JSONValueDecoder.integer(type, value, codingPath) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try JSONValueDecoder.decode(type, from: value, at: codingPath)
        }
    }
}

/// A coding key for paths: an object member's name or an array index.
struct JSONKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        self.init(index: intValue)
    }

    init(index: Int) {
        stringValue = "\(index)"
        intValue = index
    }
}
