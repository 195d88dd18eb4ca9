import Foundation

extension Contact {
    /// This contact, as the store has it now, with what an edit changed from `original` to `edited`, and only
    /// that: a field the edit left alone keeps this contact's value, which sync may have changed while the
    /// edit was open (in a form or in an editor).
    public func applying(changesFrom original: Contact, to edited: Contact) -> Contact {
        var result = self
        func take<Value: Equatable>(_ keyPath: WritableKeyPath<Contact, Value>) {
            if edited[keyPath: keyPath] != original[keyPath: keyPath] {
                result[keyPath: keyPath] = edited[keyPath: keyPath]
            }
        }
        func takeItems(_ keyPath: WritableKeyPath<Contact, [LabeledValue]>) {
            let shown = { (items: [LabeledValue]) in items.map { [$0.label, $0.value] } }
            if shown(edited[keyPath: keyPath]) != shown(original[keyPath: keyPath]) {
                result[keyPath: keyPath] = edited[keyPath: keyPath]
            }
        }
        take(\.name)
        takeItems(\.emails)
        takeItems(\.phones)
        take(\.organization)
        take(\.address)
        take(\.notes)
        take(\.birthday)
        take(\.anniversary)
        take(\.groups)
        take(\.photo)
        take(\.extras)
        return result
    }
}
