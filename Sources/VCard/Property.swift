/// One content line of a card: `[group.]NAME;PARAM=value…:value`.
///
/// ``value`` is the text exactly as it stands in the file after unfolding, escapes and all, so a
/// property this library does not understand is written back unchanged. ``text`` and
/// ``components`` read and write it through vCard's backslash escaping.
///
/// Names, groups and parameter names must be made of ASCII letters, digits, `-` and `_`
/// (a group may also hold `.`); the parser keeps names uppercased and groups as written.
public struct Property: Sendable, Hashable {
    /// The group before the name, `"item1"` in `item1.EMAIL`, as written.
    public var group: String?
    /// The property name, uppercased.
    public var name: String
    /// The parameters in file order.
    public var parameters: [Parameter]
    /// The raw value: escaped text exactly as in the file, unfolded. It never holds a line break;
    /// the serializer writes one set here as `\n`.
    public var value: String

    /// Creates a property from a raw (already escaped) value. The name is uppercased, an empty
    /// group is no group, and line breaks in `value` become `\n`.
    public init(name: String, parameters: [Parameter] = [], value: String, group: String? = nil) {
        self.group = group?.isEmpty == true ? nil : group
        self.name = name.uppercased()
        self.parameters = parameters
        self.value = TextEscaping.escapingLineBreaks(value)
    }

    /// Creates a property holding one text, escaping `\`, `,`, `;` and line breaks for you:
    /// `Property(name: "NOTE", text: "Met at Zoë's, 2019\nLikes tea")`.
    ///
    /// Use ``init(name:parameters:value:group:)`` for URI values (`URL`, `PHOTO;VALUE=uri`),
    /// which are not TEXT and must not have their commas escaped.
    public init(name: String, text: String, parameters: [Parameter] = [], group: String? = nil) {
        self.init(name: name, parameters: parameters, value: TextEscaping.escape(text), group: group)
    }

    /// Creates a structured property (N, ADR, ORG): components joined with `;`, each component's
    /// values joined with `,`, every value escaped.
    ///
    /// `Property(name: "N", components: [["Ångström"], ["Zoë"], [], ["Dr."], []])`
    public init(name: String, components: [[String]], parameters: [Parameter] = [], group: String? = nil) {
        self.init(
            name: name, parameters: parameters, value: TextEscaping.value(ofComponents: components), group: group)
    }

    /// Keeps parsed text as it is: the parser has already uppercased the name and checked the rest.
    init(parsedGroup group: String?, name: String, parameters: [Parameter], value: String) {
        self.group = group
        self.name = name
        self.parameters = parameters
        self.value = value
    }

    /// The whole value as one unescaped text, for FN, NOTE, EMAIL, TEL and the like. A line break
    /// reads as `"\n"`; setting it escapes for you.
    public var text: String {
        get { TextEscaping.unescape(value) }
        set { value = TextEscaping.escape(newValue) }
    }

    /// The value split at unescaped `;` into components and each component at unescaped `,`, all
    /// unescaped: `N:Ångström;Zoë;;Dr.;` is `[["Ångström"], ["Zoë"], [""], ["Dr."], [""]]`.
    /// An empty value reads as `[[""]]`.
    public var components: [[String]] {
        get { TextEscaping.components(of: value) }
        set { value = TextEscaping.value(ofComponents: newValue) }
    }

    /// The property's types, lowercased and without repeats, in the order written: every `TYPE`
    /// parameter's values split at commas (`TYPE=WORK,VOICE`, `TYPE=work;TYPE=pref`,
    /// `TYPE="work,voice"`), vCard 2.1 bare parameters (`;WORK;VOICE`, `;PREF`), and `"pref"` for a
    /// vCard 4.0 `PREF` parameter, so `types.contains("pref")` works for every version.
    public var types: [String] {
        var types: [String] = []
        func add(_ type: some StringProtocol) {
            let type = type.trimmingWhitespace().lowercased()
            if !type.isEmpty && !types.contains(type) { types.append(type) }
        }
        for parameter in parameters {
            if parameter.name == "TYPE" {
                for value in parameter.values {
                    for type in value.split(separator: ",") { add(type) }
                }
            } else if parameter.name == "PREF" && !parameter.values.isEmpty {
                add("pref")
            } else if parameter.values.isEmpty && !Self.bareEncodings.contains(parameter.name) {
                add(parameter.name)
            }
        }
        return types
    }

    /// How preferred this property is among its kind, 1 being the most: the vCard 4.0 `PREF`
    /// value, or 1 when vCard 3.0 or 2.1 marks it `pref`; `nil` when nothing marks it.
    public var preference: Int? {
        for parameter in parameters where parameter.name == "PREF" {
            if let rank = parameter.values.first.flatMap({ Int($0.trimmingWhitespace()) }) { return rank }
        }
        return types.contains("pref") ? 1 : nil
    }

    /// vCard 2.1 bare parameters that name an encoding rather than a type.
    private static let bareEncodings: Set<String> = ["BASE64", "B", "QUOTED-PRINTABLE", "8BIT", "7BIT"]
}
