import Foundation

/// A birthday or an anniversary coming round soon, as `contacts birthdays` lists them.
public struct UpcomingDate: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case birthday, anniversary
    }

    public var contactID: UUID
    public var name: String
    public var kind: Kind
    /// The day it falls on.
    public var date: ContactDate
    /// How many days from today; 0 is today.
    public var days: Int
    /// Which one it is (a 40th birthday); nil when the year is not known.
    public var years: Int?

    package init(contactID: UUID, name: String, kind: Kind, date: ContactDate, days: Int, years: Int?) {
        self.contactID = contactID
        self.name = name
        self.kind = kind
        self.date = date
        self.days = days
        self.years = years
    }
}
