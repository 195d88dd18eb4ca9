import Foundation

/// Three-way merge of a contact, field by field, against the last version both sides agreed on.
///
/// A field changed on one side takes that side. Changed on both: the newer edit wins; at equal
/// times, the larger value, so that every device picks the same. Emails and phones merge item by
/// item (items keep their IDs across devices): an item added on either side stays; an item removed
/// on one side goes unless the other side edited it (an edit is never lost to a delete). Groups merge
/// as a set: a group joined on either side stays, a group left on either side goes.
public enum ContactMerge {
    public static func merge(base: Contact?, local: Contact, remote: Contact) -> Contact {
        var merged = remote
        (merged.name, merged.modified[.name]) = pick(\.name, .name, base, local, remote)
        (merged.organization, merged.modified[.organization]) = pick(\.organization, .organization, base, local, remote)
        (merged.address, merged.modified[.address]) = pick(\.address, .address, base, local, remote)
        (merged.notes, merged.modified[.notes]) = pick(\.notes, .notes, base, local, remote)
        (merged.birthday, merged.modified[.birthday]) = pick(\.birthday, .birthday, base, local, remote)
        (merged.anniversary, merged.modified[.anniversary]) = pick(\.anniversary, .anniversary, base, local, remote)
        merged.groups = mergeGroups(base: base?.groups, local: local.groups, remote: remote.groups)
        merged.modified[.groups] = max(local.modificationDate(of: .groups), remote.modificationDate(of: .groups))
        (merged.extras, merged.modified[.extras]) = pick(\.extras, .extras, base, local, remote)
        merged.emails = mergeItems(base: base?.emails, local: local.emails, remote: remote.emails)
        merged.phones = mergeItems(base: base?.phones, local: local.phones, remote: remote.phones)
        merged.modified[.emails] = max(local.modificationDate(of: .emails), remote.modificationDate(of: .emails))
        merged.modified[.phones] = max(local.modificationDate(of: .phones), remote.modificationDate(of: .phones))
        return merged
    }

    private static func pick<Value: Hashable & Encodable>(
        _ keyPath: KeyPath<Contact, Value>, _ field: Contact.Field, _ base: Contact?, _ local: Contact,
        _ remote: Contact
    ) -> (Value, Date) {
        let (localValue, remoteValue) = (local[keyPath: keyPath], remote[keyPath: keyPath])
        let (localDate, remoteDate) = (local.modificationDate(of: field), remote.modificationDate(of: field))
        if localValue == remoteValue { return (localValue, max(localDate, remoteDate)) }
        if let base {
            if base[keyPath: keyPath] == localValue { return (remoteValue, remoteDate) }
            if base[keyPath: keyPath] == remoteValue { return (localValue, localDate) }
        }
        return newer((localValue, localDate), (remoteValue, remoteDate))
    }

    /// The newer of two edits; at equal times the one whose value sorts last, the same on every device.
    private static func newer<Value: Encodable>(_ a: (Value, Date), _ b: (Value, Date)) -> (Value, Date) {
        if a.1 != b.1 { return a.1 > b.1 ? a : b }
        return tieKey(a.0) >= tieKey(b.0) ? a : b
    }

    private static func tieKey(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self)
    }

    static func mergeGroups(base: [String]?, local: [String], remote: [String]) -> [String] {
        guard let base else { return Contact.groupList(remote + local) }
        let (inBase, inLocal, inRemote) = (Set(base), Set(local), Set(remote))
        return Contact.groupList(remote + local).filter { group in
            inBase.contains(group) ? inLocal.contains(group) && inRemote.contains(group) : true
        }
    }

    static func mergeItems(base: [LabeledValue]?, local: [LabeledValue], remote: [LabeledValue]) -> [LabeledValue] {
        let baseByID = Dictionary((base ?? []).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let localByID = Dictionary(local.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let remoteByID = Dictionary(remote.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var merged: [LabeledValue] = []
        // Remote order first, then what only the local side has, in its order.
        for id in remote.map(\.id) + local.map(\.id).filter({ remoteByID[$0] == nil }) {
            if merged.contains(where: { $0.id == id }) { continue }
            let inBase = baseByID[id]
            switch (localByID[id], remoteByID[id]) {
            case (let l?, let r?):
                if l.sameContent(as: r) {
                    merged.append(l.modified >= r.modified ? l : r)
                } else if let inBase, inBase.sameContent(as: l) {
                    merged.append(r)
                } else if let inBase, inBase.sameContent(as: r) {
                    merged.append(l)
                } else {
                    merged.append(newer((l, l.modified), (r, r.modified)).0)
                }
            case (let l?, nil):
                // Removed remotely: keep only a local addition or a local edit since the base.
                if let inBase, inBase.sameContent(as: l) { continue }
                merged.append(l)
            case (nil, let r?):
                if let inBase, inBase.sameContent(as: r) { continue }
                merged.append(r)
            case (nil, nil):
                continue
            }
        }
        return merged
    }
}
