import ArgumentParser
import ContactsLocal
import ContactsModel
import ContactsStore
import Foundation

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List contacts, sorted by name (ID, name, first email, first phone).",
        discussion: """
            With words, only the contacts every word finds: anywhere in the contact (name, emails, \
            organisation, groups, address, notes, or three digits or more of a phone number), or where a \
            scope says: name:, email:, org:, tel:, group:, book:, note:, address:. Letter case and accents \
            are ignored. Example: contacts list email:example.org group:family
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Words to look for, such as 'ada' or 'org:acme tel:0199'.") var words: [String] = []
    @Option(help: "Only the contacts of this book (`contacts book list` shows the books).") var book: String?
    @Option(help: "Only the contacts in this group, letter case aside (`contacts groups` shows the groups).")
    var group: String?
    @Flag(help: "Print JSON: an array of contacts with every field.") var json = false

    func run() async throws {
        let device = try await Session.open(global, needsServer: false)
        let zoneID = try book.map { try device.reader.resolveBook($0).zoneID }
        let search = ContactSearch(words.joined(separator: " "))
        // A line (or a JSON object) a contact, written as the contacts are read: a million contacts are
        // never held at once.
        let output = StandardOutput()
        var array = json ? ContactJSON.ArrayWriter(output) : nil
        var listed = 0
        try device.reader.forEachContact(matching: search, in: zoneID) { contact in
            if let group, !contact.isInGroup(group) { return true }
            listed += 1
            if array != nil {
                try array!.append(contact)
                return true
            }
            try output.write(
                [
                    String(contact.id.uuidString.prefix(8)), contact.name.terminalSafe,
                    contact.emails.first?.value.terminalSafe ?? "", contact.phones.first?.value.terminalSafe ?? "",
                ].joined(separator: "\t") + "\n")
            return true
        }
        try array?.finish()
        try output.flush()
        guard listed == 0, !json else { return }
        if let group {
            throw CommandFailure(
                "no contact is in the group '\(group.terminalSafe)'; `contacts groups` shows the groups")
        }
        if !words.isEmpty {
            throw CommandFailure("no contact matches '\(words.joined(separator: " ").terminalSafe)'")
        }
        print("No contacts on device '\(global.device)'. Add one with: contacts add --name \"Ada Lovelace\"")
    }
}

struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show every field of one contact.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The contact's ID, or the start of it (as `contacts list` shows).") var id: String
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let device = try await Session.open(global, needsServer: false)
        guard let contact = try device.reader.contact(try device.reader.resolve(id)) else {
            throw CommandFailure(ContactError.unknownID(id).description)
        }
        if json {
            print(try ContactJSON.encode(contact))
            return
        }
        print("ID:           \(contact.id.uuidString)")
        print("Name:         \(contact.name.terminalSafe)")
        if let book = try device.reader.book(of: contact.id) {
            print(
                "Book:         \(book.name.terminalSafe)\(book.isOwn ? "" : " (\(book.ownerText), \(book.accessText))")"
            )
        }
        for email in contact.emails { print("Email:        \(email.value.terminalSafe)\(email.label.labelSuffix)") }
        for phone in contact.phones { print("Phone:        \(phone.value.terminalSafe)\(phone.label.labelSuffix)") }
        if !contact.organization.isEmpty { print("Organisation: \(contact.organization.terminalSafe)") }
        if !contact.address.isEmpty { print("Address:      \(contact.address.singleLine.terminalSafe)") }
        if let birthday = contact.birthday { print("Birthday:     \(birthday.spelledOut)") }
        if let anniversary = contact.anniversary { print("Anniversary:  \(anniversary.spelledOut)") }
        if !contact.groups.isEmpty { print("Groups:       \(contact.groups.joined(separator: ", ").terminalSafe)") }
        if !contact.notes.isEmpty { print("Notes:        \(contact.notes.terminalSafe)") }
        if let photo = contact.photo {
            let here =
                device.photos.has(photo)
                ? "" : " (not downloaded yet: contacts photo \(contact.id.uuidString.prefix(8)))"
            print("Photo:        \(photo.summary.terminalSafe)\(here)")
        }
    }
}

/// `--email` and `--phone` values: "value" or "label:value".
struct LabeledInput: ExpressibleByArgument {
    var label: String
    var value: String

    init?(argument: String) {
        if let colon = argument.firstIndex(of: ":"), !argument[..<colon].contains("@"),
            argument[..<colon].allSatisfy({ $0.isLetter || $0 == "-" || $0 == " " }), colon != argument.startIndex
        {
            label = String(argument[..<colon]).lowercased()
            value = String(argument[argument.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        } else {
            label = ""
            value = argument.trimmingCharacters(in: .whitespaces)
        }
    }
}

struct ContactFields: ParsableArguments {
    @Option(help: "The contact's name.") var name: String?
    @Option(
        help: ArgumentHelp("An email, optionally labelled: work:ada@example.org. Repeat for more.", valueName: "email"))
    var email: [LabeledInput] = []
    @Option(
        help: ArgumentHelp(
            "A phone number, optionally labelled: mobile:+1 555 0100. Repeat for more.", valueName: "phone"))
    var phone: [LabeledInput] = []
    @Option(help: "The organisation.") var org: String?
    @Option(help: "A note.") var note: String?
    @Option(help: "Street address.") var street: String?
    @Option(help: "City.") var city: String?
    @Option(help: "Postal code.") var postalCode: String?
    @Option(help: "Country.") var country: String?
    @Option(
        help: ArgumentHelp(
            "The birthday: 1985-04-12, or 04-12 when the year is not known; \"\" removes it.", valueName: "date"),
        transform: { try DateInput(argument: $0, field: "birthday") })
    var birthday: DateInput?
    @Option(
        help: ArgumentHelp("The anniversary, written as the birthday is; \"\" removes it.", valueName: "date"),
        transform: { try DateInput(argument: $0, field: "anniversary") })
    var anniversary: DateInput?
    @Option(
        help: ArgumentHelp(
            "A group, such as Family (vCard CATEGORIES). Repeat for more; on edit, replaces the groups.",
            valueName: "group"))
    var group: [String] = []

    /// Whether any field option was given.
    var isChanging: Bool {
        let single: [Any?] = [name, org, note, street, city, postalCode, country, birthday, anniversary]
        return single.contains { $0 != nil } || !email.isEmpty || !phone.isEmpty || !group.isEmpty
    }

    func apply(to contact: inout Contact, replaceLists: Bool) {
        if let name { contact.name = name }
        if replaceLists || !email.isEmpty {
            contact.emails = email.map { LabeledValue(label: $0.label, value: $0.value) }
        }
        if replaceLists || !phone.isEmpty {
            contact.phones = phone.map { LabeledValue(label: $0.label, value: $0.value) }
        }
        if let org { contact.organization = org }
        if let note { contact.notes = note }
        if let street { contact.address.street = street }
        if let city { contact.address.city = city }
        if let postalCode { contact.address.postalCode = postalCode }
        if let country { contact.address.country = country }
        if let birthday { contact.birthday = birthday.date }
        if let anniversary { contact.anniversary = anniversary.date }
        if replaceLists || !group.isEmpty { contact.groups = Contact.groupList(group) }
    }
}

/// `--birthday` and `--anniversary` values: a date, or nothing to remove it.
struct DateInput {
    var date: ContactDate?

    init(argument: String, field: String) throws {
        do {
            date = try ContactDate.typed(argument, field: field)
        } catch {
            throw ValidationError(error.description)
        }
    }
}

struct AddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a contact, then sync it (it stays saved on this device if offline).",
        discussion: "Example: contacts add --name \"Ada Lovelace\" --email work:ada@example.org --phone \"+1 555 0100\""
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var fields: ContactFields
    @Option(help: "The book to add to (default: Contacts; `contacts book list` shows the books).") var book: String?
    @OptionGroup var edit: EditSyncOptions

    func validate() throws {
        guard fields.name != nil else { throw ValidationError("--name is required, such as --name \"Ada Lovelace\"") }
    }

    func run() async throws {
        var contact = Contact(name: "")
        fields.apply(to: &contact, replaceLists: true)
        // Check before anything opens or starts: bad input changes nothing.
        try ContactValidation.validate(contact)
        let device = try await Session.open(global, needsServer: edit.syncs)
        let saved = try device.contacts.add(contact, to: try book.map { try device.reader.resolveBook($0).zoneID })
        print(saved.id.uuidString)
        await edit.syncAfterEdit(device)
    }
}

struct EditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Change fields of a contact; --email, --phone and --group replace that whole list.",
        discussion: """
            Example: contacts edit 3f2a9c1e --name "Ada King" --phone mobile:+1 555 0199

            With --editor, the contact opens as a text file in $VISUAL or $EDITOR (vi when neither is \
            set). Saving checks it: a file with problems opens again with them at its top; quitting \
            without saving, or saving an empty file, changes nothing.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The contact's ID, or the start of it.") var id: String
    @OptionGroup var fields: ContactFields
    @Flag(help: "Remove every email (before adding any --email).") var clearEmails = false
    @Flag(help: "Remove every phone number (before adding any --phone).") var clearPhones = false
    @Flag(help: "Take the contact out of every group (before adding any --group).") var clearGroups = false
    @Flag(help: "Edit the whole contact as a text file in $VISUAL or $EDITOR.") var editor = false
    @OptionGroup var edit: EditSyncOptions

    func validate() throws {
        if editor && (fields.isChanging || clearEmails || clearPhones || clearGroups) {
            throw ValidationError("--editor edits the whole contact; leave out the other field options")
        }
    }

    func run() async throws {
        let device = try await Session.open(global, needsServer: edit.syncs)
        guard var contact = try device.reader.contact(try device.reader.resolve(id)) else {
            throw CommandFailure(ContactError.unknownID(id).description)
        }
        if editor {
            let original = contact
            do {
                guard let edited = try ExternalEditor().edit(original) else {
                    print("Nothing changed.")
                    return
                }
                // What sync or another command changed meanwhile stays, in the fields the edit left alone.
                let current = try device.reader.contact(original.id) ?? original
                contact = current.applying(changesFrom: original, to: edited)
            } catch let failure as ExternalEditor.Failure {
                throw CommandFailure(failure.description)
            }
        }
        // Cleared first: `--clear-emails --email new` replaces the emails with the new one.
        if clearEmails { contact.emails = [] }
        if clearPhones { contact.phones = [] }
        if clearGroups { contact.groups = [] }
        fields.apply(to: &contact, replaceLists: false)
        try device.contacts.update(contact)
        print(contact.id.uuidString)
        await edit.syncAfterEdit(device)
    }
}

struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a contact here and, once synced, on every device.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The contact's ID, or the start of it.") var id: String
    @OptionGroup var edit: EditSyncOptions

    func run() async throws {
        let device = try await Session.open(global, needsServer: edit.syncs)
        let resolved = try device.reader.resolve(id)
        try device.contacts.delete(resolved)
        print("deleted \(resolved.uuidString)")
        await edit.syncAfterEdit(device)
    }
}

extension String {
    /// A label in parentheses after its value, escaped for the terminal; nothing when there is no label.
    var labelSuffix: String { isEmpty ? "" : " (\(terminalSafe))" }
}

enum ContactJSON {
    /// `value` as pretty JSON with sorted keys, made safe for a terminal; `encoder` is a new one of
    /// ``encoder`` unless given (a writer of many values keeps one).
    static func encode(_ value: some Encodable, with encoder: JSONEncoder = encoder) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self).terminalSafeJSON
    }

    /// A new encoder of the app's JSON.
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// A JSON array written an element at a time, byte for byte as ``encode(_:)`` writes the whole array.
    struct ArrayWriter {
        private let output: StandardOutput
        private let encoder = ContactJSON.encoder
        private var count = 0

        init(_ output: StandardOutput) {
            self.output = output
        }

        mutating func append(_ element: some Encodable) throws {
            // The encoder writes an array's elements indented by two spaces, blank lines left blank.
            var text = count == 0 ? "[\n" : ",\n"
            let lines = try ContactJSON.encode(element, with: encoder).split(
                separator: "\n", omittingEmptySubsequences: false)
            text += lines.map { $0.isEmpty ? "" : "  " + $0 }.joined(separator: "\n")
            try output.write(text)
            count += 1
        }

        /// Ends the array, and its line.
        func finish() throws {
            try output.write(count == 0 ? "[\n\n]\n" : "\n]\n")
        }
    }
}
