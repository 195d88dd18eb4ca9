import ArgumentParser
import ContactsModel
import ContactsStore
import Foundation

/// `contacts add-from-mail`: the sender of a message on standard input, added (for a mail client's
/// macro, such as mutt's `<pipe-message>contacts add-from-mail<enter>`).
struct AddFromMailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-from-mail",
        abstract: "Add the sender of the email message on standard input (its From: header), then sync.",
        discussion: """
            Names in encoded words (=?UTF-8?B?…?=) are decoded. A contact that has the address already \
            is left as it is, unless it has no name of its own, which it then gets.

            mutt and neomutt: macro index,pager A "<pipe-message>contacts add-from-mail<enter>"
            aerc (binds.conf): A = :pipe -m contacts add-from-mail<Enter>
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "The book a new contact goes into (default: Contacts).") var book: String?
    @OptionGroup var edit: EditSyncOptions

    func run() async throws {
        // Only the header section matters; the body is read and dropped, so that the mail client
        // piping the message never meets a closed pipe.
        var header = ""
        var inHeader = true
        while let line = readLine(strippingNewline: false) {
            guard inHeader else { continue }
            if line.trimmingCharacters(in: .newlines).isEmpty || header.utf8.count > 1 << 20 {
                inHeader = false
                continue
            }
            header += line
        }
        let sender = try FromHeader(message: header)
        let device = try await Session.open(global, needsServer: edit.syncs)
        let outcome = try device.interchange.addSender(
            sender, to: try book.map { try device.reader.resolveBook($0).zoneID })
        switch outcome {
        case .added(let contact):
            print("added \(contact.name.terminalSafe) <\(sender.address.terminalSafe)> \(contact.id.uuidString)")
        case .named(let contact):
            print("named \(contact.name.terminalSafe) <\(sender.address.terminalSafe)> \(contact.id.uuidString)")
        case .known(let contact):
            print(
                "already there: \(contact.name.terminalSafe) <\(sender.address.terminalSafe)> \(contact.id.uuidString)")
            return
        }
        await edit.syncAfterEdit(device)
    }
}
