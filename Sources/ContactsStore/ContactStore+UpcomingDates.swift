import ContactsModel
import Foundation

extension ContactStore {
    /// The birthdays and anniversaries from `today` (a Gregorian day) to `days` days after it, soonest
    /// first, names in list order on the same day.
    package func upcomingDates(from today: DateComponents, within days: Int) throws -> [UpcomingDate] {
        var found: [(UpcomingDate, order: Int)] = []
        var order = 0
        try forEachContact { contact in
            order += 1
            for (kind, date) in [(UpcomingDate.Kind.birthday, contact.birthday), (.anniversary, contact.anniversary)] {
                guard let date, let next = date.next(onOrAfter: today), next.days <= days else { continue }
                let upcoming = UpcomingDate(
                    contactID: contact.id, name: contact.name, kind: kind, date: next.date, days: next.days,
                    years: date.years(on: next.date))
                found.append((upcoming, order))
            }
            return true
        }
        return found.sorted { ($0.0.days, $0.order) < ($1.0.days, $1.order) }.map(\.0)
    }
}
