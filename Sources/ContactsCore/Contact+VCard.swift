import Foundation
import SyncKit
import VCard

extension Contact {
    /// Properties the app models; everything else is kept in ``extras`` as it was.
    private static let modelled: Set<String> = ["FN", "EMAIL", "TEL", "ORG", "NOTE", "UID"]

    /// Reads a contact from a card. A card without FN takes its name from N.
    public init(vCard card: VCard, now: Date = Date()) {
        let uid = card.first("UID")?.text ?? ""
        let id = UUID(uuidString: Self.dropping("urn:uuid:", from: uid)) ?? .random()
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
        emails = card.all("EMAIL").map { LabeledValue(label: Self.label($0), value: $0.text, modified: now) }
        phones = card.all("TEL").map {
            LabeledValue(
                label: Self.label($0), value: Self.dropping("tel:", from: $0.text), modified: now)
        }
        organization =
            card.first("ORG").map { $0.components.map { $0.joined(separator: ",") }.joined(separator: ";") } ?? ""
        notes = card.all("NOTE").map(\.text).joined(separator: "\n")
        var extras: [String] = []
        var addressTaken = false
        for property in card.properties where !Self.modelled.contains(property.name) {
            if property.name == "ADR" && !addressTaken {
                addressTaken = true
                let parts = property.components.map { $0.joined(separator: ",") }
                func part(_ index: Int) -> String { index < parts.count ? parts[index] : "" }
                // ADR is PO box;extended;street;locality;region;postal code;country.
                let street = [part(0), part(1), part(2)].filter { !$0.isEmpty }.joined(separator: "\n")
                address = PostalAddress(
                    street: street, city: part(3), region: part(4), postalCode: part(5), country: part(6))
                continue
            }
            extras.append(VCardSerializer.contentLine(property))
        }
        self.extras = extras
    }

    /// The card for this contact, in `version`, with the unmodelled properties it was imported with.
    public func vCard(version: VCard.Version = .v4) -> VCard {
        var properties: [Property] = [Property(name: "FN", text: name)]
        let kept = extras.compactMap(Self.property(fromContentLine:))
        // vCard 3.0 requires N; an N kept from an import stays unless the name was edited since.
        let nameEditedSinceImport = modificationDate(of: .name) > modificationDate(of: .extras)
        let generatedN = Property(name: "N", components: nameComponents)
        if version == .v3 && !kept.contains(where: { $0.name == "N" }) { properties.append(generatedN) }
        properties.append(Property(name: "UID", value: version == .v4 ? "urn:uuid:\(id.uuidString)" : id.uuidString))
        for email in emails {
            properties.append(Property(name: "EMAIL", text: email.value, parameters: Self.typeParameters(email.label)))
        }
        for phone in phones {
            properties.append(Property(name: "TEL", text: phone.value, parameters: Self.typeParameters(phone.label)))
        }
        if !organization.isEmpty {
            properties.append(
                Property(
                    name: "ORG",
                    components: organization.split(separator: ";", omittingEmptySubsequences: false).map {
                        [String($0)]
                    }))
        }
        if !address.isEmpty {
            properties.append(
                Property(
                    name: "ADR",
                    components: [
                        [""], [""], [address.street], [address.city], [address.region], [address.postalCode],
                        [address.country],
                    ]))
        }
        if !notes.isEmpty { properties.append(Property(name: "NOTE", text: notes)) }
        for property in kept {
            properties.append(property.name == "N" && nameEditedSinceImport ? generatedN : property)
        }
        return VCard(version: version, properties: properties)
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
    private static func dropping(_ prefix: String, from text: String) -> String {
        text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
    }

    private static func label(_ property: Property) -> String {
        property.types.first { !["internet", "pref", "voice", "x400"].contains($0) } ?? ""
    }

    private static func typeParameters(_ label: String) -> [Parameter] {
        label.isEmpty ? [] : [Parameter(name: "TYPE", values: [label])]
    }

    static func property(fromContentLine line: String) -> Property? {
        VCardParser.parse("BEGIN:VCARD\r\nVERSION:4.0\r\n\(line)\r\nEND:VCARD\r\n").cards.first?.properties.first
    }
}
