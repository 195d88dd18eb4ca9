import Foundation

/// One person in the address book. Every field carries the time it was last edited, so that two
/// devices editing different fields of one contact both keep their edits (see ``ContactMerge``).
public struct Contact: Sendable, Hashable, Codable, Identifiable {
    /// The fields a user edits; each is merged on its own.
    public enum Field: String, Sendable, Hashable, Codable, CaseIterable, CodingKeyRepresentable {
        case name, emails, phones, organization, address, notes, birthday, anniversary, groups
        /// vCard properties the app does not model, kept so that export loses nothing.
        case extras
        /// The photo (vCard's `PHOTO`), its image kept apart as an asset.
        case photo
    }

    public var id: UUID
    public var name: String
    public var emails: [LabeledValue]
    public var phones: [LabeledValue]
    public var organization: String
    public var address: PostalAddress
    public var notes: String
    public var birthday: ContactDate?
    /// A wedding or any other day the person keeps (vCard's `ANNIVERSARY`).
    public var anniversary: ContactDate?
    /// The groups the person is in (vCard's `CATEGORIES`), each once, in the order given.
    public var groups: [String]
    /// Unmodelled vCard properties, each one unfolded content line (`X-TWITTER:@ada`).
    public var extras: [String]
    /// The photo, if any: what it is; the image is a file of the device and an asset of the record.
    public var photo: ContactPhoto?
    /// When each scalar field was last edited (lists keep a time per item).
    public var modified: [Field: Date]

    public init(
        id: UUID = .random(), name: String, emails: [LabeledValue] = [], phones: [LabeledValue] = [],
        organization: String = "", address: PostalAddress = .init(), notes: String = "", birthday: ContactDate? = nil,
        anniversary: ContactDate? = nil, groups: [String] = [], extras: [String] = [], modified: Date = Date()
    ) {
        self.id = id
        self.name = name
        self.emails = emails
        self.phones = phones
        self.organization = organization
        self.address = address
        self.notes = notes
        self.birthday = birthday
        self.anniversary = anniversary
        self.groups = Self.groupList(groups)
        self.extras = extras
        let time = modified.roundedToMilliseconds
        self.modified = Dictionary(uniqueKeysWithValues: Field.allCases.map { ($0, time) })
    }

    /// When `field` was last edited; the distant past when never.
    public func modificationDate(of field: Field) -> Date {
        modified[field] ?? .distantPast
    }

    /// `names` as groups: each trimmed, on one line, once (letter case aside), empty ones dropped.
    public static func groupList(_ names: [String]) -> [String] {
        var seen: Set<String> = []
        return names.compactMap { name in
            let name = trimmed(name.split(whereSeparator: \.isNewline).joined(separator: " "))
            guard !name.isEmpty, seen.insert(name.lowercased()).inserted else { return nil }
            return name
        }
    }

    /// Whether the contact is in `group`, letter case and accents aside.
    public func isInGroup(_ group: String) -> Bool {
        let wanted = Contact.sortKey(group)
        return groups.contains { Contact.sortKey($0) == wanted }
    }

    /// The latest edit of any field.
    public var lastModified: Date {
        let items = (emails + phones).map(\.modified)
        return (Array(modified.values) + items).max() ?? .distantPast
    }
}

/// An email address or phone number with its label ("work", "home", "mobile"…).
public struct LabeledValue: Sendable, Hashable, Codable, Identifiable {
    /// Stable across devices, so that lists merge item by item.
    public var id: String
    public var label: String
    public var value: String
    public var modified: Date

    /// A new item gets a random ID.
    public init(id: String? = nil, label: String, value: String, modified: Date = Date()) {
        self.id = id ?? UUID.random().canonicalString
        self.label = label
        self.value = value
        self.modified = modified.roundedToMilliseconds
    }

    /// Whether the user-visible parts are the same (ignoring when they were written).
    func sameContent(as other: LabeledValue) -> Bool {
        label == other.label && value == other.value
    }

    /// Splits `work: ada@example.org`, as a person writes an item in a form or a template, into its label
    /// and value. Text before the first colon is the label unless it contains `@`; a line starting with a
    /// colon has no label (`: odd:address@example.org`).
    public static func parse(_ text: String) -> (label: String, value: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let colon = trimmed.firstIndex(of: ":") else { return ("", trimmed) }
        let label = trimmed[..<colon]
        guard !label.contains("@") else { return ("", trimmed) }
        let value = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        return (label.trimmingCharacters(in: .whitespaces), value)
    }

    /// The item as a person writes it, so that ``parse(_:)`` reads it back the same.
    public var labeledText: String {
        if label.isEmpty {
            return Self.parse(value) == ("", value) ? value : ": " + value
        }
        return "\(label): \(value)"
    }
}

/// A postal address, as vCard's ADR has it.
public struct PostalAddress: Sendable, Hashable, Codable {
    public var street: String
    public var city: String
    public var region: String
    public var postalCode: String
    public var country: String

    public init(
        street: String = "", city: String = "", region: String = "", postalCode: String = "", country: String = ""
    ) {
        self.street = street
        self.city = city
        self.region = region
        self.postalCode = postalCode
        self.country = country
    }

    public var isEmpty: Bool { [street, city, region, postalCode, country].allSatisfy(\.isEmpty) }

    /// One line for display: "1 Main St, Springfield, 12345, USA".
    public var singleLine: String {
        [street, city, region, postalCode, country].filter { !$0.isEmpty }.joined(separator: ", ")
    }
}

extension Date {
    /// The server keeps dates to the millisecond; so does everything compared with them.
    var roundedToMilliseconds: Date {
        Date(timeIntervalSince1970: (timeIntervalSince1970 * 1000).rounded() / 1000)
    }
}

extension Contact {
    /// This contact with the edit time set on every field (and list item) that differs from `old`. Without
    /// `old` it is a contact being made: its items get IDs made from its own (``withItemIDsOfItsOwn()``).
    public func stamped(against old: Contact?, at date: Date = Date()) -> Contact {
        let time = date.roundedToMilliseconds
        var result = old == nil ? withItemIDsOfItsOwn() : self
        func stamp(_ field: Field, _ changed: Bool) {
            if changed || old == nil { result.modified[field] = time }
        }
        stamp(.name, name != old?.name)
        stamp(.organization, organization != old?.organization)
        stamp(.address, address != old?.address)
        stamp(.notes, notes != old?.notes)
        stamp(.birthday, birthday != old?.birthday)
        stamp(.anniversary, anniversary != old?.anniversary)
        stamp(.groups, groups != old?.groups)
        stamp(.extras, extras != old?.extras)
        stamp(.photo, photo != old?.photo)
        stamp(
            .emails, emails.map(\.value) != old?.emails.map(\.value) || emails.map(\.label) != old?.emails.map(\.label))
        stamp(
            .phones, phones.map(\.value) != old?.phones.map(\.value) || phones.map(\.label) != old?.phones.map(\.label))
        result.emails = Self.stampItems(result.emails, against: old?.emails ?? [], at: time)
        result.phones = Self.stampItems(result.phones, against: old?.phones ?? [], at: time)
        return result
    }

    private static func stampItems(_ items: [LabeledValue], against old: [LabeledValue], at time: Date)
        -> [LabeledValue]
    {
        let previous = Dictionary(old.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        return items.map { item in
            var item = item
            if let before = previous[item.id], before.sameContent(as: item) { return before }
            item.modified = time
            return item
        }
    }

    /// Whether two contacts show the same things to the user (ignoring edit times).
    public func sameContent(as other: Contact) -> Bool {
        id == other.id && name == other.name && organization == other.organization && address == other.address
            && notes == other.notes && birthday == other.birthday && anniversary == other.anniversary
            && groups == other.groups && extras == other.extras && photo == other.photo
            && emails.map { [$0.id, $0.label, $0.value] } == other.emails.map { [$0.id, $0.label, $0.value] }
            && phones.map { [$0.id, $0.label, $0.value] } == other.phones.map { [$0.id, $0.label, $0.value] }
    }
}

extension Contact {
    /// Reads the JSON that stores written before the binary format, which had no birthday, anniversary
    /// or groups.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(UUID.self, forKey: .id), name: try container.decode(String.self, forKey: .name),
            emails: try container.decode([LabeledValue].self, forKey: .emails),
            phones: try container.decode([LabeledValue].self, forKey: .phones),
            organization: try container.decode(String.self, forKey: .organization),
            address: try container.decode(PostalAddress.self, forKey: .address),
            notes: try container.decode(String.self, forKey: .notes),
            birthday: try container.decodeIfPresent(ContactDate.self, forKey: .birthday),
            anniversary: try container.decodeIfPresent(ContactDate.self, forKey: .anniversary),
            groups: try container.decodeIfPresent([String].self, forKey: .groups) ?? [],
            extras: try container.decodeIfPresent([String].self, forKey: .extras) ?? [])
        modified = try container.decode([Field: Date].self, forKey: .modified)
    }
}
