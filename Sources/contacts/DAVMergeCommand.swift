import ArgumentParser
import ContactsModel
import Foundation
import VCard

/// vdirsyncer's conflict resolution command: both versions of a card edited on both sides become one that
/// keeps every value of each (``ContactsModel/Contact/combined(with:)``), written to both files.
struct DAVMergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge", abstract: "Merge two versions of a card into one that loses nothing (for vdirsyncer).",
        discussion: """
            For vdirsyncer's conflict_resolution = ["command", "contacts", "dav", "merge"]: given the local \
            card and the bridge's, writes to both files one card with every email, phone, group and property \
            of either; a value that has no room for a second (another name, organisation, birthday, \
            address) is kept in the notes as "Also …". The bridge's version comes first: it holds what \
            other devices merged.
            """)

    @Argument(help: ArgumentHelp("The local version (vdirsyncer's a).", valueName: "file-a")) var a: String
    @Argument(help: ArgumentHelp("The bridge's version (vdirsyncer's b).", valueName: "file-b")) var b: String

    func run() throws {
        let local = try Self.card(a)
        let bridge = try Self.card(b)
        let merged = Contact(vCard: bridge).combined(with: [Contact(vCard: local)])
        let text = VCardSerializer.serialize(merged.vCard(version: bridge.version))
        for path in [a, b] {
            do {
                try text.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw CommandFailure("could not write the merged card to \(path): \(error.localizedDescription)")
            }
        }
    }

    private static func card(_ path: String) throws -> VCard {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("cannot read \(path); give the two versions' files, as vdirsyncer does")
        }
        let parsed = VCardParser.parse(data)
        guard parsed.cards.count == 1, let card = parsed.cards.first else {
            throw CommandFailure("\(path) does not hold exactly one vCard (it holds \(parsed.cards.count))")
        }
        return card
    }
}
