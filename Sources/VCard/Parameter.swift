/// A property parameter such as `TYPE=work,voice` or a bare vCard 2.1 `WORK`.
///
/// The name is uppercased; values are kept in order, unquoted and with RFC 6868 caret escapes
/// (`^n`, `^^`, `^'`) decoded. `TYPE=work,voice` and `TYPE="work","voice"` have the values
/// `["work", "voice"]`; the quoted `TYPE="work,voice"` has the single value `"work,voice"`
/// (``Property/types`` splits it). A bare parameter (`;WORK`) has no values; `;X=` has one
/// empty value.
public struct Parameter: Sendable, Hashable {
    /// The parameter name, uppercased by the initialisers.
    public var name: String
    /// The values in order, unquoted and unescaped.
    public var values: [String]

    /// Creates a parameter. The name is uppercased; line breaks in values become `"\n"`, the only
    /// line break RFC 6868 can write.
    public init(name: String, values: [String]) {
        self.name = name.uppercased()
        self.values = values.map(TextEscaping.normalizingLineBreaks)
    }

    /// Creates a parameter from a name and its values: `Parameter("TYPE", "work", "voice")`.
    public init(_ name: String, _ values: String...) {
        self.init(name: name, values: values)
    }

    /// Keeps parsed text as it is: the parser has already uppercased the name.
    init(parsedName name: String, values: [String]) {
        self.name = name
        self.values = values
    }

    /// A `TYPE` parameter: `.type("work", "voice")`.
    public static func type(_ values: String...) -> Parameter {
        Parameter(name: "TYPE", values: values)
    }

    /// A vCard 4.0 `PREF` parameter: 1 is the most preferred, 100 the least.
    public static func pref(_ rank: Int) -> Parameter {
        Parameter(name: "PREF", values: [String(rank)])
    }
}
