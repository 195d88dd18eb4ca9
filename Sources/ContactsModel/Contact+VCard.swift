import Foundation
import VCard

extension Contact {
    /// Properties the app models; everything else is kept in ``extras`` as it was.
    private static let modelled: Set<String> = ["FN", "EMAIL", "TEL", "ORG", "NOTE", "UID"]

    /// Reads a contact from a card. A card without FN takes its name from N.
    public init(vCard card: VCard, now: Date = Date()) {
        let uid = card.first("UID")?.text ?? ""
        // A UID that is not a UUID names the same contact each time the card comes (UUID(vCardUID:)).
        let id =
            UUID(canonical: Self.dropping("urn:uuid:", from: uid)) ?? (uid.isEmpty ? .random() : UUID(vCardUID: uid))
        let name =
            card.first("FN")?.text
            ?? card.first("N").map { property in
                let parts = property.components.map { $0.joined(separator: " ") }
                // N is family;given;additional;prefix;suffix.
                return [
                    parts.count > 3 ? parts[3] : "", parts.count > 1 ? parts[1] : "", parts.count > 2 ? parts[2] : "",
                    parts.first ?? "", parts.count > 4 ? parts[4] : "",
                ]
                .filter { !$0.isEmpty }.joined(separator: " ")
            } ?? ""
        self.init(id: id, name: Self.trimmed(name), modified: now)
        organization =
            card.first("ORG").map { $0.components.map { $0.joined(separator: ",") }.joined(separator: ";") } ?? ""
        notes = card.all("NOTE").map(\.text).joined(separator: "\n")
        // Unmodelled properties, with their groups (lower case).
        var extras: [(line: String, group: String?)] = []
        var forms: [(line: String, group: String?, rank: Int)] = []
        var addressTaken = false
        for property in card.properties {
            let isItem = Self.itemProperties.contains(property.name)
            if isItem || (property.name == "ADR" && !addressTaken) {
                if isItem {
                    let item = LabeledValue(
                        label: Self.itemLabel(property, in: card.properties), value: Self.itemValue(property),
                        modified: now)
                    if property.name == "EMAIL" { emails.append(item) } else { phones.append(item) }
                } else {
                    addressTaken = true
                    address = Self.postalAddress(property)
                }
                // Its form, when the app would write it otherwise (Contact+ItemForms).
                if let form = Self.form(of: property, in: card.properties) {
                    let rank = property.name == "EMAIL" ? 0 : property.name == "TEL" ? 1 : 2
                    forms.append((form, property.group?.lowercased(), rank))
                }
                continue
            }
            if Self.modelled.contains(property.name) { continue }
            // This app's own line for a photo it keeps: a card that carries one names an image this device
            // does not have (its photo comes as PHOTO).
            if property.name == ContactPhoto.propertyName { continue }
            if take(property) { continue }
            extras.append((VCardSerializer.contentLine(property), property.group?.lowercased()))
        }
        // A UID written otherwise than this app writes the ID (lower case, another scheme) is kept as it came:
        // programs that sync by UID (vdirsyncer, khard) would take a rewritten one for another card.
        if !uid.isEmpty, uid != id.canonicalString, uid != "urn:uuid:\(id.canonicalString)" {
            extras.insert((VCardSerializer.contentLine(Property(name: "UID", text: uid)), nil), at: 0)
        }
        self.extras = Self.formsFirst(forms, extras)
    }

    /// The forms, each followed by the other lines of its group, in the order the card is written (emails,
    /// phones, the address), then the other unmodelled properties as they came: a card read, written and
    /// read again gives the same list.
    private static func formsFirst(
        _ forms: [(line: String, group: String?, rank: Int)], _ extras: [(line: String, group: String?)]
    ) -> [String] {
        guard !forms.isEmpty else { return extras.map(\.line) }
        let groups = Set(forms.compactMap(\.group))
        var companions: [String: [String]] = [:]
        var rest: [String] = []
        for extra in extras {
            if let group = extra.group, groups.contains(group) {
                companions[group, default: []].append(extra.line)
            } else {
                rest.append(extra.line)
            }
        }
        var lines: [String] = []
        for form in forms.enumerated().sorted(by: { ($0.element.rank, $0.offset) < ($1.element.rank, $1.offset) }) {
            lines.append(form.element.line)
            if let group = form.element.group { lines += companions.removeValue(forKey: group) ?? [] }
        }
        return lines + rest
    }

    /// The card for this contact, in `version`, with the unmodelled properties it was imported with.
    public func vCard(version: VCard.Version = .v4) -> VCard {
        var properties: [Property] = [Property(name: "FN", text: name)]
        let kept = extras.compactMap(Self.property(fromContentLine:))
        // vCard 3.0 requires N; an N kept from an import stays unless the name was edited since.
        let nameEditedSinceImport = modificationDate(of: .name) > modificationDate(of: .extras)
        let generatedN = Property(name: "N", components: nameComponents)
        if version == .v3 && !kept.contains(where: { $0.name == "N" }) { properties.append(generatedN) }
        if !kept.contains(where: { $0.name == "UID" }) {
            properties.append(
                Property(name: "UID", value: version == .v4 ? "urn:uuid:\(id.canonicalString)" : id.canonicalString))
        }
        var forms = ItemForms(kept)
        for email in emails { properties += forms.lines("EMAIL", email) }
        for phone in phones { properties += forms.lines("TEL", phone) }
        if !organization.isEmpty {
            properties.append(
                Property(
                    name: "ORG",
                    components: organization.split(separator: ";", omittingEmptySubsequences: false).map {
                        [String($0)]
                    }))
        }
        if !address.isEmpty { properties += forms.lines(address) }
        if !notes.isEmpty { properties.append(Property(name: "NOTE", text: notes)) }
        properties += datesAndGroups(version: version)
        for property in kept where !forms.belongsToAForm(property) {
            properties.append(property.name == "N" && nameEditedSinceImport ? generatedN : property)
        }
        return VCard(version: version, properties: properties)
    }

    /// Takes `property` into the birthday, the anniversary or the groups, when it is one of them and
    /// the contact does not have it yet; false leaves it for ``extras``.
    mutating func take(_ property: Property) -> Bool {
        switch property.name {
        case "BDAY" where birthday == nil:
            birthday = Self.date(property)
            return birthday != nil
        case "ANNIVERSARY" where anniversary == nil, "X-ANNIVERSARY" where anniversary == nil:
            anniversary = Self.date(property)
            return anniversary != nil
        case "CATEGORIES":
            groups = Self.groupList(groups + property.components.flatMap { $0 })
            return true
        case ContactPhoto.propertyName where photo == nil:
            photo = ContactPhoto(property: property)
            return photo != nil
        default:
            return false
        }
    }

    /// BDAY, ANNIVERSARY and CATEGORIES for this contact as `version` writes them: vCard 3.0 has dates
    /// in the extended form and no ANNIVERSARY (X-ANNIVERSARY, as Evolution and others write it).
    func datesAndGroups(version: VCard.Version) -> [Property] {
        let extended = version == .v3
        var properties: [Property] = []
        if let birthday { properties.append(Property(name: "BDAY", value: birthday.vCardValue(extended: extended))) }
        if let anniversary {
            properties.append(
                Property(
                    name: extended ? "X-ANNIVERSARY" : "ANNIVERSARY", value: anniversary.vCardValue(extended: extended))
            )
        }
        if !groups.isEmpty { properties.append(Property(name: "CATEGORIES", components: [groups])) }
        return properties
    }

    /// A date property's day; nil for a text value ("circa 1800") or a time without a date.
    private static func date(_ property: Property) -> ContactDate? {
        let omittedYear = property.parameters.first { $0.name == "X-APPLE-OMIT-YEAR" }?.values.first.flatMap {
            Int($0)
        }
        return ContactDate(vCard: property.value, omittedYear: omittedYear)
    }

    /// N from the display name: the last word is the family name.
    private var nameComponents: [[String]] {
        var words = name.split(separator: " ").map(String.init)
        let family = words.count > 1 ? words.removeLast() : ""
        return [[family], [words.joined(separator: " ")], [], [], []]
    }

    /// `text` without leading and trailing white space, line breaks included (Unicode's White_Space).
    static func trimmed(_ text: String) -> String {
        guard let first = text.firstIndex(where: { !$0.isWhitespace }),
            let last = text.lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(text[first...last])
    }

    /// `text` without `prefix` when it starts with it ("urn:uuid:" before a UID, "tel:" before a number).
    static func dropping(_ prefix: String, from text: String) -> String {
        text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
    }

    static func property(fromContentLine line: String) -> Property? {
        VCardParser.parse("BEGIN:VCARD\r\nVERSION:4.0\r\n\(line)\r\nEND:VCARD\r\n").cards.first?.properties.first
    }
}
