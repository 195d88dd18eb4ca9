import ArgumentParser
import ContactsModel
import ContactsStore
import Foundation

/// `contacts duplicates`: contacts that are likely one person.
struct DuplicatesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "duplicates",
        abstract: "Find contacts that are likely one person, and say how to merge them.",
        discussion: """
            Contacts of one book look alike when they share an email, a phone number (its last nine \
            digits), or a name (case, accents, punctuation and word order aside), or when their names are \
            one typo apart. Each group is listed with why, then the command that merges it, keeping every \
            distinct value. Reads this device's contacts; it never syncs.
            """)

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let device = try await Session.open(global, needsServer: false)
        let groups = try device.reader.duplicates()
        if groups.isEmpty {
            print("No likely duplicates among \(try device.reader.count()) contacts.")
            return
        }
        for (number, group) in groups.enumerated() {
            if number > 0 { print("") }
            print(
                "\(group.contacts.map(\.name.terminalSafe).joined(separator: ", ")): \(group.reasons.joined(separator: ", "))"
            )
            for contact in group.contacts {
                let columns = [
                    "  " + String(contact.id.uuidString.prefix(8)), contact.name.terminalSafe,
                    contact.emails.first?.value.terminalSafe ?? "", contact.phones.first?.value.terminalSafe ?? "",
                ]
                print(columns.joined(separator: "\t"))
            }
            print(
                "  merge with: contacts merge "
                    + group.contacts.map { String($0.id.uuidString.prefix(8)) }.joined(separator: " "))
        }
    }
}

/// `contacts merge`: one contact from several.
struct MergeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge contacts that are one person into the first, keeping every distinct value, then sync.",
        discussion: """
            Emails, phones, groups and unmodelled vCard properties are put together; an empty field takes \
            another's value; a second organisation, birthday, address or name is kept in the notes as \
            "Also …". The others are deleted, here and, once synced, on every device. \
            `contacts duplicates` finds candidates. Example: contacts merge 3f2a9c1e 77ab01cd
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The contacts' IDs, or the start of them; the first is kept.") var ids: [String] = []
    @OptionGroup var edit: EditSyncOptions

    func validate() throws {
        guard ids.count >= 2 else {
            throw ValidationError("give two contacts or more, such as: contacts merge 3f2a9c1e 77ab01cd")
        }
    }

    func run() async throws {
        let device = try await Session.open(global, needsServer: edit.syncs)
        let resolved = try ids.map { try device.reader.resolve($0) }
        let merged = try device.contacts.merge(resolved)
        print("Merged \(resolved.count) contacts into \(merged.name.terminalSafe) (\(merged.id.uuidString)).")
        await edit.syncAfterEdit(device)
    }
}
