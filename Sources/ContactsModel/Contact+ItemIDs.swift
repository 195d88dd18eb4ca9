import Foundation

/// The IDs of a new contact's list items, made from the contact's own ID: the store keeps such an ID in two
/// bytes (its list and place) where a random one takes seventeen.
extension Contact {
    /// The lists whose items have IDs, by the number their derived IDs carry.
    public enum ItemList: UInt8, Sendable, CaseIterable {
        case emails = 0
        case phones = 1
    }

    /// The ID of item `index` of `list` of the contact `contact`, as a contact made on a device gets it: the
    /// contact's 16 bytes with byte 6 marking a UUID of version 8 (RFC 9562's own-format version) and
    /// `list`, and byte 7 the index. Unlike any random (version 4) ID, and unlike each other within a
    /// contact. Items past the 256th keep a random ID.
    public static func itemID(of contact: UUID, list: ItemList, index: UInt8) -> UUID {
        var bytes = contact.uuid
        bytes.6 = 0x80 | list.rawValue
        bytes.7 = index
        return UUID(uuid: bytes)
    }

    /// The index `id` has as ``itemID(of:list:index:)`` of `contact`'s `list`; nil when `id` is not made so.
    public static func itemIndex(of id: UUID, in contact: UUID, list: ItemList) -> UInt8? {
        var made = id.uuid
        guard made.6 == 0x80 | list.rawValue else { return nil }
        let index = made.7
        (made.6, made.7) = (contact.uuid.6, contact.uuid.7)
        return UUID(uuid: made) == contact ? index : nil
    }

    /// This contact with its emails and phones given IDs made from its own (``itemID(of:list:index:)``): what
    /// a contact gets when it is made, before anything else knows its items.
    func withItemIDsOfItsOwn() -> Contact {
        var result = self
        func give(_ items: inout [LabeledValue], _ list: ItemList) {
            for index in items.indices.prefix(256) {
                items[index].id = Self.itemID(of: id, list: list, index: UInt8(index)).canonicalString
            }
        }
        give(&result.emails, .emails)
        give(&result.phones, .phones)
        return result
    }
}
