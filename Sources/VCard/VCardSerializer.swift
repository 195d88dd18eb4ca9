/// Writes cards as a vCard file: `BEGIN:VCARD`, `VERSION`, the properties in order,
/// `END:VCARD`, with CR LF line endings and lines folded at 75 octets.
///
/// Parameter values are quoted when they hold `:`, `;` or `,` and caret-encoded (RFC 6868) for
/// line breaks, quotes and carets. Values are written as they are; a raw line break in one is
/// written as `\n`. For every card built through this library's API,
/// `VCardParser.parse(VCardSerializer.serialize(card)).cards == [card]`, except that a property
/// marked quoted-printable is decoded when read back.
///
/// The serializer adds nothing: a vCard 4.0 card needs an `FN` property, and it is the caller's
/// job to include one.
public enum VCardSerializer {
    /// Writes the cards one after another.
    public static func serialize(_ cards: [VCard]) -> String {
        var writer = ContentLineWriter()
        for card in cards { writer.write(card) }
        return String(decoding: writer.output, as: UTF8.self)
    }

    /// Appends `card`'s text to `bytes`, as `serialize` writes it: for a file written a
    /// piece at a time.
    public static func append(_ card: VCard, to bytes: inout [UInt8]) {
        var writer = ContentLineWriter(output: bytes)
        bytes = []
        writer.write(card)
        bytes = writer.output
    }

    /// Writes one card.
    public static func serialize(_ card: VCard) -> String {
        serialize([card])
    }

    /// One property as one content line, unfolded and without its line break: the line that
    /// `serialize` would fold and end with CR LF.
    public static func contentLine(_ property: Property) -> String {
        var writer = ContentLineWriter()
        writer.build(property)
        return String(decoding: writer.line, as: UTF8.self)
    }
}

/// Builds each content line in a reused buffer, then folds it into the output.
struct ContentLineWriter {
    private(set) var output: [UInt8] = []
    private(set) var line: [UInt8] = []

    init(output: [UInt8] = []) {
        self.output = output
    }

    mutating func write(_ card: VCard) {
        output.append(contentsOf: "BEGIN:VCARD\r\nVERSION:".utf8)
        output.append(contentsOf: card.version.rawValue.utf8)
        output.append(contentsOf: "\r\n".utf8)
        for property in card.properties { write(property) }
        output.append(contentsOf: "END:VCARD\r\n".utf8)
    }

    private mutating func write(_ property: Property) {
        build(property)
        LineFolding.fold(line, into: &output)
    }

    /// Builds `property`'s content line, unfolded, in `line`.
    mutating func build(_ property: Property) {
        line.removeAll(keepingCapacity: true)
        if let group = property.group {
            line.append(contentsOf: group.utf8)
            line.append(UInt8(ascii: "."))
        }
        line.append(contentsOf: property.name.utf8)
        for parameter in property.parameters {
            line.append(UInt8(ascii: ";"))
            line.append(contentsOf: parameter.name.utf8)
            for (index, value) in parameter.values.enumerated() {
                line.append(index == 0 ? UInt8(ascii: "=") : UInt8(ascii: ","))
                CaretEncoding.append(value, to: &line)
            }
        }
        line.append(UInt8(ascii: ":"))
        line.append(contentsOf: TextEscaping.escapingLineBreaks(property.value).utf8)
    }
}
