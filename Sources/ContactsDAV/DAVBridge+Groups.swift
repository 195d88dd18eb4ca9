import ContactsModel
import ContactsStore
import Foundation
import HTTPTypes
import Hummingbird

extension DAVBridge {
    /// Which clients are served group cards (``ContactsModel/ContactGroupCard``).
    public enum GroupCards: String, Sendable, CaseIterable {
        /// Those that keep groups as cards by default: Apple's Contacts (iPhone, macOS) and DAVx5, told by
        /// their User-Agent. The others (vdirsyncer with khard, Thunderbird, Evolution) get `CATEGORIES`.
        case auto
        /// Every client.
        case always
        /// None: groups are `CATEGORIES` for every client.
        case never
    }

    /// How a client keeps groups: as cards of their own (a contact's card then has no `CATEGORIES`, and one
    /// written without them keeps its groups), or as `CATEGORIES` on each contact (group cards are not
    /// listed to it).
    enum GroupStyle { case cards, categories }

    /// The request's client's way with groups.
    func groupStyle(_ request: Request) -> GroupStyle {
        switch groupCards {
        case .always: return .cards
        case .never: return .categories
        case .auto:
            let agent = request.headers[.userAgent]?.lowercased() ?? ""
            return Self.groupCardAgents.contains { agent.contains($0) } ? .cards : .categories
        }
    }

    /// What the User-Agents of Apple's Contacts (iOS's dataaccessd, macOS's AddressBook and CardDAVPlugin)
    /// and DAVx5 (once DAVdroid) contain.
    static let groupCardAgents = [
        "ios/", "ipados/", "macos/", "mac os x", "mac_os_x", "dataaccessd", "addressbook", "carddavplugin", "davx5",
        "davdroid",
    ]

    /// The book made ready for a client of `style`: for one of group cards, its cards brought up to date
    /// with its contacts' groups.
    func prepare(_ book: AddressBook, for style: GroupStyle) throws {
        if style == .cards { try device.interchange.refreshGroupCards(in: book.zoneID) }
    }

    /// The group cards a client of `style` is not shown (none for a client of group cards).
    func hiddenIDs(in book: AddressBook, for style: GroupStyle) throws -> Set<UUID> {
        style == .cards ? [] : try device.interchange.changeLog.groupCardIDs(in: book.zoneID)
    }
}
