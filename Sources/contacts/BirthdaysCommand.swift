import ArgumentParser
import ContactsModel
import ContactsStore
import Foundation

/// `contacts birthdays`: the birthdays and anniversaries of the coming days.
struct BirthdaysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "birthdays",
        abstract: "List the birthdays and anniversaries of the coming days, soonest first.",
        discussion: """
            One line each: the day, how far off it is, the name, and what it is (with the age when the \
            year is known), separated by tabs. Set a birthday with: contacts edit ID --birthday 1985-04-12 \
            (or --birthday 04-12 when the year is not known). Reads this device's contacts; it never syncs.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "How many days ahead to look (0 is today only).") var days = 30
    @Option(
        help: ArgumentHelp("Count from this day instead of today, such as 2026-12-01.", valueName: "date"),
        transform: { text in
            guard let date = ContactDate(text), date.year != nil else {
                throw ValidationError("'\(text.terminalSafe)' is not a day; write it as 2026-12-01")
            }
            return date
        })
    var from: ContactDate?

    func validate() throws {
        guard (0...366).contains(days) else { throw ValidationError("--days must be from 0 to 366, such as --days 30") }
    }

    func run() async throws {
        let device = try await Session.open(global, needsServer: false)
        let today = from.map { DateComponents(year: $0.year, month: $0.month, day: $0.day) } ?? ContactDate.today()
        let upcoming = try device.reader.upcomingDates(from: today, within: days)
        if upcoming.isEmpty {
            print(
                "No birthday or anniversary in the next \(days) day(s). "
                    + "Add one with: contacts edit ID --birthday 1985-04-12")
            return
        }
        for item in upcoming {
            let when =
                switch item.days {
                case 0: "today"
                case 1: "tomorrow"
                default: "in \(item.days) days"
                }
            let what = item.years.map { "\(item.kind.rawValue) (\($0))" } ?? item.kind.rawValue
            print([item.date.description, when, item.name.terminalSafe, what].joined(separator: "\t"))
        }
    }
}
