import Foundation

/// The parts of a contact a person edits one by one, named as the form and the editor's file name them.
public enum ContactPart: String, Sendable, Hashable, CaseIterable {
    case name = "Name"
    case organization = "Organisation"
    case email = "Email"
    case phone = "Phone"
    case birthday = "Birthday"
    case anniversary = "Anniversary"
    case groups = "Groups"
    case street = "Street"
    case city = "City"
    case region = "Region"
    case postalCode = "Postal code"
    case country = "Country"
    case notes = "Notes"

    /// Whether the part is a list, one line per item (emails and phones); the others are one value each.
    public var isList: Bool { self == .email || self == .phone }

    /// The items of a list part of `contact` (its emails or phones); none for a one-value part.
    public func items(of contact: Contact) -> [LabeledValue] {
        switch self {
        case .email: contact.emails
        case .phone: contact.phones
        default: []
        }
    }

    /// A one-value part of `contact` as a person edits it: dates as `1985-04-12`, groups separated by
    /// commas. Lists are written one item a line (``LabeledValue/labeledText``), not by this.
    public func text(of contact: Contact) -> String {
        switch self {
        case .name: contact.name
        case .organization: contact.organization
        case .birthday: contact.birthday?.description ?? ""
        case .anniversary: contact.anniversary?.description ?? ""
        case .groups: contact.groups.joined(separator: ", ")
        case .street: contact.address.street
        case .city: contact.address.city
        case .region: contact.address.region
        case .postalCode: contact.address.postalCode
        case .country: contact.address.country
        case .notes: contact.notes
        case .email, .phone: ""
        }
    }

    /// Sets a one-value part of `contact` from what a person typed; throws for a date that is not one.
    /// Lists are set item by item by the caller, not by this.
    public func set(_ text: String, on contact: inout Contact) throws(ContactError) {
        switch self {
        case .name: contact.name = text
        case .organization: contact.organization = text
        case .birthday: contact.birthday = try ContactDate.typed(text, field: "birthday")
        case .anniversary: contact.anniversary = try ContactDate.typed(text, field: "anniversary")
        case .groups: contact.groups = Contact.groupList(text.split(separator: ",").map(String.init))
        case .street: contact.address.street = text
        case .city: contact.address.city = text
        case .region: contact.address.region = text
        case .postalCode: contact.address.postalCode = text
        case .country: contact.address.country = text
        case .notes: contact.notes = text
        case .email, .phone: break
        }
    }
}
