import Foundation

extension ContactMerge {
    /// The values of `old` that `new` replaces outright, with no merge: what a write made without knowing
    /// which version it replaces (a CardDAV PUT without `If-Match`) would drop, for the conflict log. A
    /// field is lost when its value changed; an email or phone when no item of `new` has its label and value
    /// (the item of the same ID in `new`, if any, is the one kept). A field that was empty loses nothing.
    /// Edit times: `old`'s for what is lost, `new`'s for what is kept.
    public static func overwritten(_ old: Contact, by new: Contact) -> [Loss] {
        var losses: [Loss] = []
        func compare<Value: Equatable>(
            _ keyPath: KeyPath<Contact, Value>, _ field: Contact.Field, empty: Value,
            _ value: (Value) -> ContactConflict.Value
        ) {
            let (before, after) = (old[keyPath: keyPath], new[keyPath: keyPath])
            guard before != after, before != empty else { return }
            losses.append(
                Loss(
                    field: field, kept: (value(after), new.modificationDate(of: field)),
                    lost: (value(before), old.modificationDate(of: field)), lostLocally: true))
        }
        compare(\.name, .name, empty: "", ContactConflict.Value.text)
        compare(\.organization, .organization, empty: "", ContactConflict.Value.text)
        compare(\.address, .address, empty: PostalAddress(), ContactConflict.Value.address)
        compare(\.notes, .notes, empty: "", ContactConflict.Value.text)
        compare(\.birthday, .birthday, empty: nil, ContactConflict.Value.date)
        compare(\.anniversary, .anniversary, empty: nil, ContactConflict.Value.date)
        compare(\.groups, .groups, empty: [], ContactConflict.Value.lines)
        compare(\.photo, .photo, empty: nil) { ContactConflict.Value.text($0?.summary ?? "no photo") }
        // The unmodelled properties lose something only when a line goes (one added replaces nothing).
        if old.extras.contains(where: { !new.extras.contains($0) }) {
            compare(\.extras, .extras, empty: [], ContactConflict.Value.lines)
        }
        for (field, before, after) in [
            (Contact.Field.emails, old.emails, new.emails), (.phones, old.phones, new.phones),
        ] {
            for item in before where !after.contains(where: { $0.sameContent(as: item) }) {
                let kept = after.first { $0.id == item.id }
                losses.append(
                    Loss(
                        field: field,
                        kept: (kept.map(ContactConflict.Value.item) ?? .text(""), kept?.modified ?? new.lastModified),
                        lost: (.item(item), item.modified), lostLocally: true))
            }
        }
        return losses
    }
}
