import Foundation
import VCard

/// A group as a card of its own, as Apple's Contacts (iPhone, macOS) and DAVx5 write one: vCard 3.0 with
/// `X-ADDRESSBOOKSERVER-KIND:group` and an `X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:<UID>` per member, or
/// vCard 4.0 with `KIND:group` and `MEMBER`. Evolution's contact list (`X-EVOLUTION-LIST:TRUE`, its members
/// as `EMAIL;X-EVOLUTION-DEST-CONTACT-UID=<UID>`) reads as one too.
///
/// The app keeps a group as a name on each member (``Contact/groups``); a group card is how a client that
/// wants one sees it: read into the members' groups, and written from them.
public struct ContactGroupCard: Sendable, Hashable {
    /// The group's name (the card's FN).
    public var name: String
    /// The card's UID, as its client wrote it.
    public var uid: String
    /// The members' UIDs, as the card names them (without `urn:uuid:`), each once, in order.
    public var members: [String]

    public init(name: String, uid: String, members: [String]) {
        self.name = name
        self.uid = uid
        self.members = members
    }

    /// Whether `card` is a group card in any of the three forms.
    public static func isGroup(_ card: VCard) -> Bool {
        card.properties.contains { property in
            switch property.name {
            case "KIND", "X-ADDRESSBOOKSERVER-KIND": property.text.lowercased() == "group"
            case "X-EVOLUTION-LIST": property.text.lowercased() == "true"
            default: false
            }
        }
    }

    /// Reads a group card; nil when `card` is not one.
    public init?(vCard card: VCard) {
        guard Self.isGroup(card) else { return nil }
        let name =
            card.first("FN")?.text ?? card.first("N")?.components.first?.joined(separator: " ") ?? ""
        var members: [String] = []
        for property in card.properties {
            var uid: String?
            switch property.name {
            case "MEMBER", "X-ADDRESSBOOKSERVER-MEMBER": uid = property.value
            case "EMAIL":
                uid = property.parameters.first { $0.name == "X-EVOLUTION-DEST-CONTACT-UID" }?.values.first
            default: break
            }
            guard var uid = uid?.trimmingCharacters(in: .whitespaces), !uid.isEmpty else { continue }
            if uid.lowercased().hasPrefix("urn:uuid:") { uid = String(uid.dropFirst("urn:uuid:".count)) }
            if !members.contains(uid) { members.append(uid) }
        }
        self.init(
            name: Contact.groupList([name]).first ?? "", uid: card.first("UID")?.text ?? "", members: members)
    }

    /// The card in `version`: Apple's form in 3.0, RFC 6350's in 4.0.
    public func vCard(version: VCard.Version) -> VCard {
        var properties = [
            Property(name: "FN", text: name), Property(name: "N", components: [[name], [], [], [], []]),
            Property(name: "UID", text: uid),
        ]
        let v4 = version == .v4
        properties.append(Property(name: v4 ? "KIND" : "X-ADDRESSBOOKSERVER-KIND", value: "group"))
        for member in members {
            let uri = UUID(uuidString: member) != nil ? "urn:uuid:" + member : member
            properties.append(Property(name: v4 ? "MEMBER" : "X-ADDRESSBOOKSERVER-MEMBER", value: uri))
        }
        return VCard(version: version, properties: properties)
    }

    /// The contacts a member's UID may name, as ``Contact/init(vCard:now:)`` makes an ID of a card's UID:
    /// a UUID in canonical form is the ID; another UID, written with `urn:uuid:` or without, names the
    /// contact ``UUID/init(vCardUID:)`` makes of it.
    public static func contactIDs(ofMember uid: String) -> [UUID] {
        if let id = UUID(canonical: uid) { return [id] }
        return [UUID(vCardUID: uid), UUID(vCardUID: "urn:uuid:" + uid)]
    }

    /// The UID a group card names `contact` by: the card's own UID as it came (without `urn:uuid:`), else
    /// the contact's ID.
    public static func memberUID(of contact: Contact) -> String {
        let kept = contact.extras.first { $0.hasPrefix("UID:") }.flatMap(Contact.property(fromContentLine:))?.text
        guard let kept, !kept.isEmpty else { return contact.id.canonicalString }
        return kept.lowercased().hasPrefix("urn:uuid:") ? String(kept.dropFirst("urn:uuid:".count)) : kept
    }
}
