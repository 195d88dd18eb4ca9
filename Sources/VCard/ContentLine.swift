/// Parses one unfolded content line, `[group.]name *(;param) : value`, into a ``Property``.
///
/// Names and parameter names are uppercased; parameter values are split at unquoted commas,
/// unquoted, and RFC 6868 caret-decoded. The value is kept as written.
enum ContentLine {
    /// Why a line is not a property, in words for a ``VCardProblem``.
    struct Failure: Error {
        var reason: String
    }

    static func parse(_ line: ArraySlice<UInt8>) throws(Failure) -> Property {
        var index = line.startIndex
        let end = line.endIndex
        while index < end && line[index] != colon && line[index] != semicolon { index += 1 }
        guard index < end else { throw Failure(reason: "property without ':'") }
        let (group, name) = try groupAndName(line[line.startIndex..<index])

        var parameters: [Parameter] = []
        while line[index] == semicolon {
            index += 1
            if let parameter = try parameter(in: line, at: &index) { parameters.append(parameter) }
            guard index < end else { throw Failure(reason: "property without ':'") }
        }
        // Only ':' or ';' stop the loops above, and ';' keeps it going.
        let value = String(decoding: line[(index + 1)..<end], as: UTF8.self)
        return Property(parsedGroup: group, name: name, parameters: parameters, value: value)
    }

    private static func groupAndName(_ bytes: ArraySlice<UInt8>) throws(Failure) -> (String?, String) {
        let dot = bytes.lastIndex(of: UInt8(ascii: "."))
        let nameBytes = dot.map { bytes[($0 + 1)...] } ?? bytes
        guard !nameBytes.isEmpty else { throw Failure(reason: "property without a name") }
        guard nameBytes.allSatisfy(isNameByte) else { throw invalidCharacters("property name", nameBytes) }
        guard let dot else { return (nil, uppercased(nameBytes)) }
        let groupBytes = bytes[..<dot]
        guard !groupBytes.isEmpty else { throw Failure(reason: "property group before '.' is empty") }
        guard groupBytes.allSatisfy({ isNameByte($0) || $0 == UInt8(ascii: ".") }) else {
            throw invalidCharacters("property group", groupBytes)
        }
        return (text(groupBytes), uppercased(nameBytes))
    }

    /// Reads `name[=value*(,value)]` from just after a ';', leaving `index` on the ';' or ':' that
    /// follows (or at the end of the line). An empty `;;` is skipped and gives `nil`.
    private static func parameter(in line: ArraySlice<UInt8>, at index: inout Int) throws(Failure) -> Parameter? {
        let end = line.endIndex
        let nameStart = index
        while index < end && line[index] != colon && line[index] != semicolon && line[index] != equals { index += 1 }
        let nameBytes = line[nameStart..<index]
        guard index < end && line[index] == equals else {
            guard !nameBytes.isEmpty else { return nil }
            try checkParameterName(nameBytes)
            return Parameter(parsedName: uppercased(nameBytes), values: [])
        }
        try checkParameterName(nameBytes)
        var values: [String] = []
        repeat {
            index += 1  // past '=' or ','
            values.append(try parameterValue(in: line, at: &index))
        } while index < end && line[index] == comma
        return Parameter(parsedName: uppercased(nameBytes), values: values)
    }

    private static func parameterValue(in line: ArraySlice<UInt8>, at index: inout Int) throws(Failure) -> String {
        let end = line.endIndex
        var bytes: ArraySlice<UInt8>
        if index < end && line[index] == quote {
            let start = index + 1
            guard let close = line[start...].firstIndex(of: quote) else {
                throw Failure(reason: "parameter value opens '\"' but never closes it")
            }
            bytes = line[start..<close]
            index = close + 1
            // Tolerate text after the closing quote (`TYPE="a"b`): keep it with the value.
            let rest = index
            while index < end && line[index] != colon && line[index] != semicolon && line[index] != comma { index += 1 }
            if rest < index { bytes = ArraySlice(bytes + line[rest..<index]) }
        } else {
            let start = index
            while index < end && line[index] != colon && line[index] != semicolon && line[index] != comma { index += 1 }
            bytes = line[start..<index]
        }
        return CaretEncoding.decode(bytes)
    }

    private static func checkParameterName(_ bytes: ArraySlice<UInt8>) throws(Failure) {
        guard !bytes.isEmpty else { throw Failure(reason: "parameter without a name") }
        guard bytes.allSatisfy(isNameByte) else { throw invalidCharacters("parameter name", bytes) }
    }

    private static func invalidCharacters(_ what: String, _ bytes: ArraySlice<UInt8>) -> Failure {
        Failure(reason: "\(what) '\(text(bytes))' has characters other than letters, digits and '-'")
    }

    /// Letters, digits, `-`, and `_` (not in the RFCs, but some writers use it in X- names).
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    private static func uppercased(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.lazy.map(asciiUppercased), as: UTF8.self)
    }

    private static func text(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    private static let colon = UInt8(ascii: ":")
    private static let semicolon = UInt8(ascii: ";")
    private static let equals = UInt8(ascii: "=")
    private static let comma = UInt8(ascii: ",")
    private static let quote = UInt8(ascii: "\"")
}
