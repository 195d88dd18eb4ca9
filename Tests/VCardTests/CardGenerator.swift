import VCard

/// A small deterministic random number generator (SplitMix64), so a failing seed fails again.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Makes cards through the public API: typical contacts for volume, and hostile ones whose text
/// holds every character that vCard escapes, quotes, folds or could mistake for syntax.
struct CardGenerator {
    var random: SeededGenerator

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
    }

    /// A card such as a contacts app exports: name, a few emails and phones, org, address, note.
    mutating func typicalCard(_ index: Int) -> VCard {
        let given = ["Zoë", "张", "An", "José", "Ólafur", "Αλέξανδρος", "Мария", "Ada", "Grace", "Linus"][index % 10]
        let family = ["Ångström", "伟", "Nguyễn", "Ñúñez", "Sigurðsson", "Παπαδόπουλος", "Иванова", "Lovelace"][
            index % 8]
        var properties = [
            Property(name: "FN", text: "\(given) \(family)"),
            Property(name: "N", components: [[family], [given], [], [], []]),
            Property(name: "EMAIL", text: "person\(index)@example.org", parameters: [.type("work"), .pref(1)]),
            Property(name: "EMAIL", text: "p\(index)@example.net", parameters: [.type("home")]),
            Property(name: "TEL", text: "+1-555-01\(index % 100)", parameters: [.type("cell", "voice")]),
            Property(name: "ORG", components: [["Example, Inc."], ["Research; Development"]]),
            Property(
                name: "ADR",
                components: [[], [], ["\(index) Main Street"], ["Springfield"], ["IL"], ["62701"], ["USA"]],
                parameters: [.type("home")]),
            Property(name: "NOTE", text: "Met at the conference, day \(index % 3 + 1).\nLikes tea; not coffee."),
            Property(name: "X-SOCIALPROFILE", value: "https://social.example.com/u\(index)", group: nil),
            Property(name: "UID", value: "urn:uuid:00000000-0000-4000-8000-\(String(100_000_000_000 + index))"),
        ]
        if Int.random(in: 0..<4, using: &random) == 0 {
            properties.append(Property(name: "URL", value: "https://example.com/~p\(index)", group: "item1"))
            properties.append(Property(name: "X-ABLabel", text: "_$!<HomePage>!$_", group: "item1"))
        }
        return VCard(version: index.isMultiple(of: 2) ? .v4 : .v3, properties: properties)
    }

    /// A card whose names, groups, parameters and values are random, with random text drawn
    /// heavily from the characters that matter to the format.
    mutating func hostileCard() -> VCard {
        let count = Int.random(in: 0...12, using: &random)
        let properties = (0..<count).map { _ in hostileProperty() }
        return VCard(version: Bool.random(using: &random) ? .v3 : .v4, properties: properties)
    }

    private mutating func hostileProperty() -> Property {
        let names = [
            "FN", "NOTE", "N", "ADR", "ORG", "EMAIL", "TEL", "X-SOCIALPROFILE", "X-ABLabel", "x-custom_field", "PHOTO",
        ]
        let name = names.randomElement(using: &random)!
        let group =
            Int.random(in: 0..<3, using: &random) == 0
            ? ["item1", "Item-22", "a.b"].randomElement(using: &random)! : nil
        let parameters = (0..<Int.random(in: 0...3, using: &random)).map { _ in hostileParameter() }
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            return Property(name: name, text: hostileText(), parameters: parameters, group: group)
        case 1:
            let components = (0..<Int.random(in: 1...7, using: &random)).map { _ in
                (0..<Int.random(in: 0...3, using: &random)).map { _ in hostileText(maximumLength: 12) }
            }
            return Property(name: name, components: components, parameters: parameters, group: group)
        default:
            return Property(name: name, parameters: parameters, value: hostileText(), group: group)
        }
    }

    private mutating func hostileParameter() -> Parameter {
        let name = ["TYPE", "PREF", "LABEL", "X-SERVICE-TYPE", "work", "VALUE", "GEO"].randomElement(using: &random)!
        let values = (0..<Int.random(in: 0...3, using: &random)).map { _ in hostileText(maximumLength: 16) }
        return Parameter(name: name, values: values)
    }

    /// Random text, up to `maximumLength` characters, some of them long enough to fold many times.
    mutating func hostileText(maximumLength: Int = 200) -> String {
        let length = Int.random(in: 0...maximumLength, using: &random)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            scalars.append(contentsOf: hostilePiece().unicodeScalars)
        }
        return String(scalars)
    }

    private mutating func hostilePiece() -> String {
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
            return ["\\", ",", ";", ":", "\"", "^", "=", "\n", "\r\n", "\r", "\t", " "].randomElement(using: &random)!
        case 1: return String(Unicode.Scalar(UInt8.random(in: 0...0x1F, using: &random)))
        case 2:
            return ["\u{7F}", "\u{85}", "\u{2028}", "\u{FEFF}", "\u{200D}", "\u{301}"].randomElement(using: &random)!
        case 3:
            return ["Zoë", "张伟", "👩‍👩‍👧", "🇳🇴", "👍🏽", "Nguyễn", "محمد", "\\n", "\\,", "^n", "^^"].randomElement(
                using: &random)!
        case 4: return String(Unicode.Scalar(UInt32.random(in: 0x4E00...0x9FFF, using: &random))!)
        case 5: return String(Unicode.Scalar(UInt32.random(in: 0x1F300...0x1FAFF, using: &random)) ?? "?")
        case 6: return String(Unicode.Scalar(UInt32.random(in: 0xA0...0x2FF, using: &random))!)
        default: return String(Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &random)))
        }
    }
}
