import ContactsModel
import Foundation

/// A group and how many contacts are in it.
public struct GroupCount: Sendable, Hashable {
    public var name: String
    public var count: Int
}

extension ContactStore {

    /// The groups contacts are in, in list order of their names; groups that differ only in letter case or
    /// accents are one, named as the first contact in list order names it.
    package func groups() throws -> [GroupCount] {
        var counts: [String: GroupCount] = [:]
        try forEachContact { contact in
            for group in contact.groups {
                counts[Contact.sortKey(group), default: GroupCount(name: group, count: 0)].count += 1
            }
            return true
        }
        return counts.sorted { $0.key < $1.key }.map(\.value)
    }
}
