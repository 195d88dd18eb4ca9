import ContactsModel
import ContactsStore
import Foundation
import SyncKit
import Terminal

@testable import ContactsTUI

/// Contacts, dates and states that the app tests share, fixed so that snapshots never change.
enum Fixtures {
    /// 2023-11-14 22:13:20 UTC.
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let utc = TimeZone(identifier: "UTC")!

    static func id(_ number: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", number))!
    }

    static let ada = Contact(
        id: id(1), name: "Ada Lovelace",
        emails: [LabeledValue(id: "e1", label: "work", value: "ada@example.org", modified: now)],
        phones: [LabeledValue(id: "p1", label: "mobile", value: "+44 20 7946 0000", modified: now)],
        organization: "Analytical Engines", address: PostalAddress(street: "12 St James's Square", city: "London"),
        notes: "Wrote the first program, for the Analytical Engine.", birthday: ContactDate("1815-12-10"),
        groups: ["Mathematicians", "Family"], modified: now)

    /// The list's rows, in the store's order (folded names).
    static let names = ["Ada Lovelace", "Alan Turing", "Grace Hopper", "Zoë Ångström", "张伟", "👩‍👩‍👧 Family"]

    static var rows: [ContactList.Row] {
        names.enumerated().map { ContactList.Row(id: id($0.offset + 1), name: $0.element) }
            .sorted { ($0.sortKey, $0.id.uuidString) < ($1.sortKey, $1.id.uuidString) }
    }

    /// `count` rows named "Person 0001"…
    static func manyRows(_ count: Int) -> [ContactList.Row] {
        (1...count).map { ContactList.Row(id: id($0), name: String(format: "Person %04d", $0)) }
    }

    /// A state showing the fixture rows with Ada selected and loaded, idle, on a `width` × `height` screen.
    static func state(width: Int = 100, height: Int = 30, rows: [ContactList.Row] = rows, unicode: Bool = true)
        -> AppState
    {
        var state = AppState(
            width: width, height: height, rows: rows, deviceName: "laptop", unicode: unicode, now: now, timeZone: utc)
        if state.list.selected?.id == ada.id { state.details = ada }
        state.status = idleStatus
        state.log.append(EventLog.Entry(date: now.addingTimeInterval(-30), text: "fetching"))
        state.log.append(
            EventLog.Entry(date: now.addingTimeInterval(-29), text: "fetched 6 changes, 0 deletions (6 so far)"))
        state.log.append(EventLog.Entry(date: now.addingTimeInterval(-29), text: "fetch done"))
        return state
    }

    static var idleStatus: SyncStatus {
        var status = SyncStatus()
        status.scheduler = SyncSchedule(
            SyncScheduler.Status(
                decision: .idle, lastSuccess: now.addingTimeInterval(-29), pushConnected: true))
        status.account = "ada"
        status.server = "http://127.0.0.1:8080"
        return status
    }

    /// Presses `keys` in order, returning the last effect.
    @discardableResult
    static func press(_ keys: [Key], on state: inout AppState) -> AppState.Effect? {
        var effect: AppState.Effect?
        for key in keys { effect = state.handle(key) }
        return effect
    }

    /// The keys that type `text`.
    static func typing(_ text: String) -> [Key] {
        text.map { Key.character($0) }
    }
}
