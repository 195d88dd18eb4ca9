import Testing

@testable import ContactsModel

/// The search text the store keeps beside each contact (``Contact/searchTextAfterName``) is written a byte
/// at a time; it must stay what it was defined as, each value folded as a sort key and put on one line, or
/// searches would read rows written before and after an upgrade differently.
@Suite("The stored search text")
struct SearchTextTests {
    /// The definition: a tagged segment for each value, its text ``Contact/folded(_:)``.
    private func defined(_ contact: Contact) -> String {
        typealias Tag = ContactSearch.Tag
        var segments: [(UInt8, String)] = contact.emails.map { (Tag.email, $0.value) }
        if !contact.organization.isEmpty { segments.append((Tag.organization, contact.organization)) }
        segments += contact.phones.map { (Tag.phone, Contact.phoneDigits($0.value)) }
        segments += contact.groups.map { (Tag.group, $0) }
        if !contact.address.isEmpty { segments.append((Tag.address, contact.address.singleLine)) }
        if !contact.notes.isEmpty {
            segments.append((Tag.notes, String(contact.notes.prefix(Contact.searchedNotes))))
        }
        return segments.map { String(decoding: [Tag.separator, $0.0], as: UTF8.self) + Contact.folded($0.1) }
            .joined()
    }

    @Test("upper case, control characters, accents, other scripts' digits and long notes: as defined")
    func asDefined() {
        let contacts = [
            Contact(name: "Empty"),
            Contact(
                name: "Ada", emails: [LabeledValue(label: "", value: "Ada.LOVELACE@Example.ORG")],
                phones: [
                    LabeledValue(label: "", value: "+44 (20) 7946-0958 ext. ٣"), LabeledValue(label: "", value: "x"),
                ],
                organization: "Tab\there\u{1}\u{7F}", address: PostalAddress(street: "Line\nTwo", city: "ZÜRICH"),
                notes: "Notes\r\nOn two lines " + String(repeating: "Long ", count: 600),
                groups: ["Chess Club", "Ørsted", "日本語", ""]),
            Contact(
                name: "Łukasz", emails: [LabeledValue(label: "", value: "ŁUKASZ@example.pl")],
                organization: "Firma Żółw",
                notes: "Ǆemal İstanbul ǅ"),
        ]
        for contact in contacts {
            #expect(contact.searchTextAfterName == defined(contact), "\(contact.name)")
        }
        #expect(contacts[1].searchTextAfterName.contains("\u{1F}t442079460958\u{1F}t\u{1F}"))
    }
}
