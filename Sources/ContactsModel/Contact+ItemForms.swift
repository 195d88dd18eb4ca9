import Foundation
import VCard

/// Emails, phones and the address as the client wrote them. The app models an email or phone as a label and
/// a value, and the address as five parts; a card says more: Apple's Contacts puts a custom label in a
/// property group (`item1.EMAIL;type=INTERNET;type=pref:…` with `item1.X-ABLabel:Nobel`, `item2.ADR…` with
/// `item2.X-ABADR:us`), and any client may mark the preferred one (`TYPE=pref`, `PREF=1`) or add types and
/// parameters the app has no place for. Such a property's line (its *form*) is kept among the unmodelled
/// properties, where it syncs with the contact, and the card is written with it again, its group and the
/// group's other lines included, for as long as the item or the address is what the form reads as. One
/// edited since is written as the app writes it, and its old form is no longer written.
///
/// The address's form carries ``addressFormParameter``, which tells it from the card's further addresses
/// (kept among the unmodelled properties as they came); the parameter is not written out.
extension Contact {
    /// The properties the emails and phones are read from.
    static let itemProperties: Set<String> = ["EMAIL", "TEL"]

    /// Marks the kept form of the address (the card's first ADR).
    static let addressFormParameter = "X-SYNCKIT-FORM"

    /// The label of an email or phone: the `X-ABLabel` of its group when the card has one (Apple's labels
    /// of its own, `_$!<Mobile>!$_`, read as "mobile"), else its first TYPE that says more than that it is
    /// an address or the preferred one.
    static func itemLabel(_ property: Property, in properties: [Property]) -> String {
        if let group = property.group?.lowercased(),
            let label = properties.first(where: { $0.name == "X-ABLABEL" && $0.group?.lowercased() == group })
        {
            let text = label.text
            if text.hasPrefix("_$!<") && text.hasSuffix(">!$_") { return text.dropFirst(4).dropLast(4).lowercased() }
            return text
        }
        return property.types.first { !["internet", "pref", "voice", "x400"].contains($0) } ?? ""
    }

    /// The value of an email or phone (a phone's without `tel:`).
    static func itemValue(_ property: Property) -> String {
        property.name == "TEL" ? dropping("tel:", from: property.text) : property.text
    }

    /// The line the app writes for an item it has no form for.
    static func itemProperty(_ name: String, _ item: LabeledValue) -> Property {
        Property(
            name: name, text: item.value,
            parameters: item.label.isEmpty ? [] : [Parameter(name: "TYPE", values: [item.label])])
    }

    /// The address an ADR reads as: PO box, extended address and street on the street's lines.
    static func postalAddress(_ property: Property) -> PostalAddress {
        let parts = property.components.map { $0.joined(separator: ",") }
        func part(_ index: Int) -> String { index < parts.count ? parts[index] : "" }
        // ADR is PO box;extended;street;locality;region;postal code;country.
        let street = [part(0), part(1), part(2)].filter { !$0.isEmpty }.joined(separator: "\n")
        return PostalAddress(street: street, city: part(3), region: part(4), postalCode: part(5), country: part(6))
    }

    /// The ADR the app writes for an address it has no form for.
    static func addressProperty(_ address: PostalAddress) -> Property {
        Property(
            name: "ADR",
            components: [
                [""], [""], [address.street], [address.city], [address.region], [address.postalCode], [address.country],
            ])
    }

    /// The form to keep for `property`, read as an item or the address, as a content line; nil when the app
    /// writes the same line from what it read (letter case of parameters aside).
    static func form(of property: Property, in properties: [Property]) -> String? {
        let written: Property
        var form = property
        if property.name == "ADR" {
            written = addressProperty(postalAddress(property))
            form.parameters.insert(Parameter(name: addressFormParameter, values: ["address"]), at: 0)
        } else {
            let item = LabeledValue(id: "", label: itemLabel(property, in: properties), value: itemValue(property))
            written = itemProperty(property.name, item)
        }
        func parameters(_ property: Property) -> [[String]] {
            property.parameters.map { [$0.name.uppercased()] + $0.values.map { $0.lowercased() } }
        }
        let same =
            property.group == nil && property.value == written.value && parameters(property) == parameters(written)
        return same ? nil : VCardSerializer.contentLine(form)
    }
}

/// The forms among a contact's kept properties, taken as its card is written.
struct ItemForms {
    private enum Key: Equatable {
        case item(name: String, label: String, value: String)
        case address(PostalAddress)
    }

    private var forms: [(property: Property, key: Key)] = []
    /// The other lines of each form's group (`X-ABLabel`, `X-ABADR`), by group in lower case.
    private var companions: [String: [Property]] = [:]

    init(_ kept: [Property]) {
        for property in kept {
            if Contact.itemProperties.contains(property.name) {
                let key = Key.item(
                    name: property.name, label: Contact.itemLabel(property, in: kept),
                    value: Contact.itemValue(property))
                forms.append((property, key))
            } else if Self.isAddressForm(property) {
                var form = property
                form.parameters.removeAll { $0.name == Contact.addressFormParameter }
                forms.append((form, .address(Contact.postalAddress(property))))
            }
        }
        let groups = Set(forms.compactMap { $0.property.group?.lowercased() })
        for property in kept where !Contact.itemProperties.contains(property.name) && !Self.isAddressForm(property) {
            guard let group = property.group?.lowercased(), groups.contains(group) else { continue }
            companions[group, default: []].append(property)
        }
    }

    private static func isAddressForm(_ property: Property) -> Bool {
        property.name == "ADR" && property.parameters.contains { $0.name == Contact.addressFormParameter }
    }

    /// The lines for `item` of the `name` property: its form and the form's group, when a form reads as the
    /// item; else the app's own line.
    mutating func lines(_ name: String, _ item: LabeledValue) -> [Property] {
        take(.item(name: name, label: item.label, value: item.value)) ?? [Contact.itemProperty(name, item)]
    }

    /// The lines for the address, as ``lines(_:_:)`` for an item.
    mutating func lines(_ address: PostalAddress) -> [Property] {
        take(.address(address)) ?? [Contact.addressProperty(address)]
    }

    private mutating func take(_ key: Key) -> [Property]? {
        guard let index = forms.firstIndex(where: { $0.key == key }) else { return nil }
        let form = forms.remove(at: index).property
        return [form] + (form.group.flatMap { companions[$0.lowercased()] } ?? [])
    }

    /// Whether a kept property is a form or a line of a form's group: written with what it is the form of,
    /// or not at all when that has changed since.
    func belongsToAForm(_ property: Property) -> Bool {
        Contact.itemProperties.contains(property.name) || Self.isAddressForm(property)
            || property.group.map { companions[$0.lowercased()] != nil } ?? false
    }
}
