/// One contact card: its version and its properties in file order.
///
/// `BEGIN:VCARD`, `END:VCARD` and `VERSION` are not properties: the card holds its version in
/// ``version`` and ``VCardSerializer`` writes all three. Everything else in the card, including
/// properties this library knows nothing about (`X-SOCIALPROFILE`, `item1.X-ABLabel`), is kept
/// as a ``Property`` so that reading and writing a card loses nothing.
///
/// ```swift
/// var card = VCard(version: .v4)
/// card.properties.append(Property(name: "FN", text: "Zoë Ångström"))
/// card.properties.append(Property(name: "N", components: [["Ångström"], ["Zoë"], [], [], []]))
/// card.properties.append(Property(name: "EMAIL", text: "zoe@example.org", parameters: [.type("work")]))
/// let file = VCardSerializer.serialize(card)
/// ```
public struct VCard: Sendable, Hashable {
    /// The vCard versions this library reads and writes.
    ///
    /// vCard 2.1 cards are read as ``v3`` (their bare parameters and quoted-printable values are
    /// understood) and are written back as 3.0.
    public enum Version: String, Sendable, CaseIterable {
        /// vCard 3.0, RFC 2426.
        case v3 = "3.0"
        /// vCard 4.0, RFC 6350.
        case v4 = "4.0"
    }

    /// The version written in the card's `VERSION` line. A card read without one is ``Version/v3``.
    public var version: Version
    /// The card's properties in file order, excluding `BEGIN`, `END` and `VERSION`.
    ///
    /// A vCard 4.0 file must have an `FN` property; the serializer does not invent one.
    public var properties: [Property]

    /// Creates a card.
    public init(version: Version = .v4, properties: [Property] = []) {
        self.version = version
        self.properties = properties
    }

    /// The first property with this name (case-insensitive), for example `card.first("FN")?.text`.
    public func first(_ name: String) -> Property? {
        let name = name.uppercased()
        return properties.first { $0.name == name }
    }

    /// All properties with this name (case-insensitive), in file order.
    public func all(_ name: String) -> [Property] {
        let name = name.uppercased()
        return properties.filter { $0.name == name }
    }

    /// All properties in this group (case-insensitive), such as `item1.EMAIL` and the
    /// `item1.X-ABLabel` that names it.
    public func all(inGroup group: String) -> [Property] {
        let group = group.uppercased()
        return properties.filter { $0.group?.uppercased() == group }
    }
}
