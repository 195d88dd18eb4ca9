import Foundation

/// Three-way merge of a contact, field by field, against the last version both sides agreed on.
///
/// A field changed on one side takes that side. Changed on both: the newer edit wins; at equal
/// times, the larger value, so that every device picks the same. Emails and phones merge item by
/// item (items keep their IDs across devices): an item added on either side stays; an item removed
/// on one side goes unless the other side edited it (an edit is never lost to a delete). Groups merge
/// as a set: a group joined on either side stays, a group left on either side goes. What a field or an
/// item changed on both sides loses is reported (``resolve(base:local:remote:)``) for the conflict log.
public enum ContactMerge {
    /// A value the merge dropped: both sides changed a field, or one email or phone, to different values,
    /// and the other side's edit was kept.
    public struct Loss: Sendable {
        public var field: Contact.Field
        public var kept: (value: ContactConflict.Value, edited: Date)
        public var lost: (value: ContactConflict.Value, edited: Date)
        /// Whether the value lost was the local one (else the remote one).
        public var lostLocally: Bool
    }

    public static func merge(base: Contact?, local: Contact, remote: Contact) -> Contact {
        resolve(base: base, local: local, remote: remote).merged
    }

    /// The merge, and the values it dropped.
    public static func resolve(base: Contact?, local: Contact, remote: Contact) -> (merged: Contact, losses: [Loss]) {
        var merged = remote
        var losses: [Loss] = []
        func pick<Value: Hashable & Encodable>(
            _ keyPath: WritableKeyPath<Contact, Value>, _ field: Contact.Field,
            _ value: (Value) -> ContactConflict.Value
        ) {
            let (localValue, remoteValue) = (local[keyPath: keyPath], remote[keyPath: keyPath])
            let (localDate, remoteDate) = (local.modificationDate(of: field), remote.modificationDate(of: field))
            var chosen = (localValue, max(localDate, remoteDate))
            if localValue != remoteValue {
                if let base, base[keyPath: keyPath] == localValue {
                    chosen = (remoteValue, remoteDate)
                } else if let base, base[keyPath: keyPath] == remoteValue {
                    chosen = (localValue, localDate)
                } else {
                    chosen = newer((localValue, localDate), (remoteValue, remoteDate))
                    let localWon = chosen == (localValue, localDate)
                    let (kept, lost) =
                        localWon
                        ? ((localValue, localDate), (remoteValue, remoteDate))
                        : ((remoteValue, remoteDate), (localValue, localDate))
                    losses.append(
                        Loss(
                            field: field, kept: (value(kept.0), kept.1), lost: (value(lost.0), lost.1),
                            lostLocally: !localWon))
                }
            }
            merged[keyPath: keyPath] = chosen.0
            merged.modified[field] = chosen.1
        }
        pick(\.name, .name, ContactConflict.Value.text)
        pick(\.organization, .organization, ContactConflict.Value.text)
        pick(\.address, .address, ContactConflict.Value.address)
        pick(\.notes, .notes, ContactConflict.Value.text)
        pick(\.birthday, .birthday, ContactConflict.Value.date)
        pick(\.anniversary, .anniversary, ContactConflict.Value.date)
        merged.groups = mergeGroups(base: base?.groups, local: local.groups, remote: remote.groups)
        merged.modified[.groups] = max(local.modificationDate(of: .groups), remote.modificationDate(of: .groups))
        pick(\.extras, .extras, ContactConflict.Value.lines)
        pick(\.photo, .photo) { ContactConflict.Value.text($0?.summary ?? "no photo") }
        merged.emails = mergeItems(base: base?.emails, local: local.emails, remote: remote.emails) {
            kept, lost, local in
            losses.append(
                Loss(
                    field: .emails, kept: (.item(kept), kept.modified), lost: (.item(lost), lost.modified),
                    lostLocally: local))
        }
        merged.phones = mergeItems(base: base?.phones, local: local.phones, remote: remote.phones) {
            kept, lost, local in
            losses.append(
                Loss(
                    field: .phones, kept: (.item(kept), kept.modified), lost: (.item(lost), lost.modified),
                    lostLocally: local))
        }
        merged.modified[.emails] = max(local.modificationDate(of: .emails), remote.modificationDate(of: .emails))
        merged.modified[.phones] = max(local.modificationDate(of: .phones), remote.modificationDate(of: .phones))
        return (merged, losses)
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

    /// Emails or phones merged item by item; `dropped` hears of each item both sides changed, with the
    /// one kept, the one dropped, and whether the dropped one was local.
    static func mergeItems(
        base: [LabeledValue]?, local: [LabeledValue], remote: [LabeledValue],
        dropped: (LabeledValue, LabeledValue, Bool) -> Void = { _, _, _ in }
    ) -> [LabeledValue] {
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
                    let kept = newer((l, l.modified), (r, r.modified)).0
                    merged.append(kept)
                    if kept == l { dropped(l, r, false) } else { dropped(r, l, true) }
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
