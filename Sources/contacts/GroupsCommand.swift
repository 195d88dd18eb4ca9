import ArgumentParser
import ContactsModel
import ContactsStore
import Foundation

/// `contacts groups`: the groups contacts are in.
struct GroupsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groups",
        abstract: "List the groups (vCard CATEGORIES) and how many contacts each has.",
        discussion: """
            Put a contact in groups with: contacts edit ID --group Family --group Climbing. \
            List a group's contacts with: contacts list --group Family.
            """)

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let device = try await Session.open(global, needsServer: false)
        let groups = try device.reader.groups()
        if groups.isEmpty {
            print("No contact is in a group. Add one with: contacts edit ID --group Family")
            return
        }
        for group in groups { print("\(group.name.terminalSafe)\t\(group.count)") }
    }
}
