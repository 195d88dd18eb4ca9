import Foundation

/// A birthday or an anniversary: a day of a month, with or without the year (vCard's `BDAY:--0412`
/// for a birthday whose year nobody knows).
public struct ContactDate: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public var year: Int?
    public var month: Int
    public var day: Int

    /// Nil when there is no such day: month 1–12, the day within the month (29 February only in a leap
    /// year, or without a year), the year 1–9999.
    public init?(year: Int?, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= Self.days(inMonth: month, year: year) else { return nil }
        if let year, !(1...9999).contains(year) { return nil }
        (self.year, self.month, self.day) = (year, month, day)
    }

    /// Reads a date as a person types it or as `description` writes it: `1985-04-12`, or without a
    /// year `--04-12` or `04-12`. Nil for anything else.
    public init?(_ text: String) {
        let text = Contact.trimmed(text)
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 3 where parts[0].count == 4:
            self.init(digits: parts[0], parts[1], parts[2])
        case 4 where parts[0].isEmpty && parts[1].isEmpty:
            self.init(digits: nil, parts[2], parts[3])
        case 2:
            self.init(digits: nil, parts[0], parts[1])
        default:
            return nil
        }
    }

    /// What a person typed for `field` ("birthday"): nil when empty, the date, or an error that says how to
    /// write one.
    public static func typed(_ text: String, field: String) throws(ContactError) -> ContactDate? {
        if Contact.trimmed(text).isEmpty { return nil }
        guard let date = ContactDate(text) else { throw .invalidDate(field: field, text) }
        return date
    }

    /// Reads a vCard date (RFC 6350 §4.3.1, and the extended forms vCard 3.0 cards use): `19850412`,
    /// `1985-04-12`, `--0412`, `--04-12`, or a date-time such as `1985-04-12T10:00:00Z`, whose date is
    /// kept. `omittedYear` is the year Apple's cards write when there is none (`X-APPLE-OMIT-YEAR=1604`).
    public init?(vCard value: String, omittedYear: Int? = nil) {
        let datePart = String(Contact.trimmed(value).prefix { $0 != "T" })
        if datePart.hasPrefix("--") {
            let rest = datePart.dropFirst(2).filter { $0 != "-" }
            guard rest.count == 4 else { return nil }
            self.init(digits: nil, String(rest.prefix(2)), String(rest.suffix(2)))
            return
        }
        let compact = datePart.filter { $0 != "-" }
        guard compact.count == 8, datePart.count == 8 || datePart.count == 10 else { return nil }
        let year = String(compact.prefix(4))
        if let omittedYear, Int(year) == omittedYear {
            self.init(digits: nil, String(compact.dropFirst(4).prefix(2)), String(compact.suffix(2)))
        } else {
            self.init(digits: year, String(compact.dropFirst(4).prefix(2)), String(compact.suffix(2)))
        }
    }

    private init?(digits year: String?, _ month: String, _ day: String) {
        func number(_ text: String, width: ClosedRange<Int>) -> Int? {
            guard width.contains(text.count), text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(text)
        }
        guard let month = number(month, width: 1...2), let day = number(day, width: 1...2) else { return nil }
        if let year {
            guard let year = number(year, width: 4...4) else { return nil }
            self.init(year: year, month: month, day: day)
        } else {
            self.init(year: nil, month: month, day: day)
        }
    }

    /// `1985-04-12`, or `--04-12` without a year: what `init(_:)` reads back.
    public var description: String { vCardValue(extended: true) }

    /// The vCard value: `19850412` or `--0412` (vCard 4.0), `1985-04-12` or `--04-12` (the extended form
    /// vCard 3.0 cards use).
    public func vCardValue(extended: Bool) -> String {
        let monthDay = String(format: extended ? "%02d-%02d" : "%02d%02d", month, day)
        guard let year else { return "--" + monthDay }
        return String(format: extended ? "%04d-" : "%04d", year) + monthDay
    }

    /// "12 April 1985", or "12 April" without a year.
    public var spelledOut: String {
        let monthName = Self.monthNames[month - 1]
        return year.map { "\(day) \(monthName) \($0)" } ?? "\(day) \(monthName)"
    }

    /// The next time this day comes round on or after `today` (a day in the Gregorian calendar, UTC), and
    /// how many days until then. 29 February falls on 28 February in other years.
    public func next(onOrAfter today: DateComponents) -> (date: ContactDate, days: Int)? {
        guard let todayYear = today.year, let todayDate = Self.day(today) else { return nil }
        for year in [todayYear, todayYear + 1] {
            let day = min(self.day, Self.days(inMonth: month, year: year))
            guard let date = Self.day(DateComponents(year: year, month: month, day: day)), date >= todayDate
            else { continue }
            let days = Self.calendar.dateComponents([.day], from: todayDate, to: date).day ?? 0
            return (ContactDate(year: year, month: month, day: day)!, days)
        }
        return nil
    }

    /// Which anniversary the day `on` is (a 40th birthday); nil without a year.
    public func years(on date: ContactDate) -> Int? {
        guard let year, let then = date.year else { return nil }
        return then - year
    }

    /// Kept as its text, `"1985-04-12"` or `"--04-12"`, in JSON as in a vCard.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let date = ContactDate(text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "\(text) is not a date such as 1985-04-12"))
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    public static func < (a: ContactDate, b: ContactDate) -> Bool {
        (a.year ?? 0, a.month, a.day) < (b.year ?? 0, b.month, b.day)
    }

    /// Today's day in the Gregorian calendar of `timeZone`.
    public static func today(_ now: Date = Date(), in timeZone: TimeZone = .current) -> DateComponents {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.dateComponents([.year, .month, .day], from: now)
    }

    private static func days(inMonth month: Int, year: Int?) -> Int {
        switch month {
        case 2:
            guard let year else { return 29 }
            return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    private static func day(_ components: DateComponents) -> Date? {
        calendar.date(from: DateComponents(year: components.year, month: components.month, day: components.day))
    }

    private static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
        "November", "December",
    ]
}
