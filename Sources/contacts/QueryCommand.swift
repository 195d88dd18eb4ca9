import ArgumentParser
import ContactsModel
import ContactsStore
import Foundation

/// `contacts query`: addresses for mail clients (mutt's and neomutt's `query_command`, aerc's
/// `address-book-cmd`).
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Find email addresses for a mail client: every word must match; case and accents are ignored.",
        discussion: """
            mutt and neomutt: set query_command = "contacts query --format mutt %s"
            aerc (aerc.conf, [compose]): address-book-cmd = contacts query --format aerc "%s"

            The mutt format prints a first line saying what was found, then one line per address: \
            email, TAB, name, TAB, organisation. The aerc format prints email, TAB, name. Words match \
            anywhere in the contact (name, emails, organisation, groups, address, notes, or three digits \
            or more of a phone number), or where a scope says: name:, email:, org:, tel:, group:, book:, \
            note:, address:. The exit status is 1 when nothing matches. Reads this device's contacts only; it never syncs.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case mutt, aerc
    }

    @OptionGroup var global: GlobalOptions
    @Argument(help: "What to look for, such as 'lukasz' or 'ada example.org'.") var query: String
    @Option(help: "mutt (also for neomutt) or aerc.") var format = Format.mutt

    func run() async throws {
        guard let search = ContactSearch(query) else {
            throw ValidationError("give something to look for, such as: contacts query ada")
        }
        let device = try await Session.open(global, needsServer: false)
        let lines = try device.reader.contacts(matching: search).flatMap { contact in
            contact.emails.map { email in
                let fields =
                    format == .mutt
                    ? [email.value, contact.name, contact.organization] : [email.value, contact.name]
                return fields.map(\.terminalSafe).joined(separator: "\t")
            }
        }
        if format == .mutt {
            print(
                lines.isEmpty
                    ? "No address matches '\(query.terminalSafe)'."
                    : "\(lines.count) address(es) match '\(query.terminalSafe)':")
        }
        for line in lines { print(line) }
        if lines.isEmpty { throw ExitCode(1) }
    }
}
