import ArgumentParser
import ContactsModel
import ContactsStore
import Foundation

/// `contacts conflicts …`: the values merges dropped, and putting them back.
struct ConflictsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts",
        abstract: "List the values that edits on other devices overwrote; put one back, or dismiss it.",
        discussion: """
            When two devices change the same field of a contact (or the same email or phone) before \
            either has seen the other's change, the later edit is kept everywhere and the other value is \
            logged here with both sides: the values, the devices and when each was edited. The log is \
            synced, so every device (and everyone a book is shared with) has the same one. Restoring puts \
            the lost value back as a new edit, which syncs like any other; restoring or dismissing takes \
            the entry out of the log on every device.

            Example: contacts conflicts
                     contacts conflicts restore 3f2a9c1e
            """,
        subcommands: [List.self, Restore.self, Dismiss.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the log, newest first: each entry's ID, contact and field, the kept and the lost value.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: false)
            let entries = try device.reader.conflicts()
            guard !entries.isEmpty else {
                print("No conflicts: no edit on device '\(global.device)' or any other has been overwritten.")
                return
            }
            print(
                "\(entries.count) conflict\(entries.count == 1 ? "" : "s"), newest first; `contacts conflicts restore ID` puts a lost value back."
            )
            let formatter = DateFormatter()
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
            for entry in entries {
                print("")
                print("\(entry.shortID)  \(entry.contactName.terminalSafe): \(entry.fieldName)")
                for (word, side) in [("kept", entry.kept), ("lost", entry.lost)] {
                    let value = side.value.text.isEmpty ? "(empty)" : side.value.text.terminalSafe
                    print(
                        "  \(word)  \(value)  (\(side.device.terminalSafe), edited \(formatter.string(from: side.edited)))"
                    )
                }
            }
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restore",
            abstract: "Put an entry's lost value back into its contact, as a new edit, then sync.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The entry's ID, or the start of it, as `contacts conflicts` prints it.") var id: String
        @OptionGroup var edit: EditSyncOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: edit.syncs)
            let entry = try device.reader.resolveConflict(id)
            let contact = try device.contacts.restoreConflict(entry.id)
            let value = entry.lost.value.text.isEmpty ? "(empty)" : entry.lost.value.text.terminalSafe
            print("Restored \(contact.name.terminalSafe)'s \(entry.fieldName): \(value)")
            await edit.syncAfterEdit(device)
        }
    }

    struct Dismiss: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "dismiss",
            abstract: "Take an entry out of the log, keeping the contact as it is, then sync.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The entry's ID, or the start of it, as `contacts conflicts` prints it.") var id: String
        @OptionGroup var edit: EditSyncOptions

        func run() async throws {
            let device = try await Session.open(global, needsServer: edit.syncs)
            let entry = try device.reader.resolveConflict(id)
            try device.contacts.dismissConflict(entry.id)
            print("Dismissed the conflict over \(entry.contactName.terminalSafe)'s \(entry.fieldName).")
            await edit.syncAfterEdit(device)
        }
    }
}
