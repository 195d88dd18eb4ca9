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

extension Contact {
    /// `items`, read afresh from a card (each with a new ID), with the IDs and edit times of `previous` where
    /// they are the same items: one with the same label and value is that item; one left over takes the ID of
    /// the item left over at its place (an item edited in place). Others stay new. So a client that rewrites
    /// every item of a card edits only those it changed, and a merge with another device's edit, or the
    /// conflict log, sees the item it replaced.
    public static func items(_ items: [LabeledValue], keepingIDsOf previous: [LabeledValue]) -> [LabeledValue] {
        var result = items
        var unused = Set(previous.indices)
        var matched = Set<Int>()
        for index in result.indices {
            guard let found = unused.sorted().first(where: { previous[$0].sameContent(as: result[index]) }) else {
                continue
            }
            result[index] = previous[found]
            unused.remove(found)
            matched.insert(index)
        }
        for index in result.indices where !matched.contains(index) && unused.contains(index) {
            result[index].id = previous[index].id
            unused.remove(index)
        }
        return result
    }
}
