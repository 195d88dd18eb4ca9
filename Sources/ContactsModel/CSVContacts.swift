import Foundation
import VCard

/// Contacts from CSV files as Google Contacts and Outlook export them: a header row names the columns
/// (RFC 4180 quoting, with line breaks inside quotes); each further row is a contact.
///
/// Google writes `First Name`/`Last Name` (or `Name`), `E-mail 1 - Value` with `E-mail 1 - Type`,
/// `Phone 1 - Value` with its type, `Organization 1 - Name` (or `Organization Name`), `Address 1 - Street`…,
/// and several values in one cell joined by ` ::: `. Outlook writes `First Name`, `Last Name`,
/// `E-mail Address`, `E-mail 2 Address`, `Mobile Phone`, `Business Phone`, `Company`, `Business Street`….
/// Birthdays come as `Birthday` (Google: `1985-04-12` or `--04-12`; Outlook: `4/12/1985`, `0/0/00` for none),
/// anniversaries as Outlook's `Anniversary` or Google's `Event 1 - Type` and `- Value`, groups as Google's
/// `Labels` or `Group Membership` (`* myContacts ::: Friends`, its own groups starred) and Outlook's
/// `Categories` (`Family;Work`).
public enum CSVContacts {
    /// The contacts of `bytes`, each with the line its row starts on, and the rows that were skipped.
    public static func read(utf8 bytes: [UInt8]) -> (
        contacts: [(contact: Contact, line: Int)], problems: [VCardProblem]
    ) {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        var rows = records(text)
        guard !rows.isEmpty else { return ([], []) }
        let header = rows.removeFirst().fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        var contacts: [(Contact, Int)] = []
        var problems: [VCardProblem] = []
        for row in rows where !row.fields.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
            var cells: [String: String] = [:]
            for (index, name) in header.enumerated() where index < row.fields.count {
                cells[name] = row.fields[index].trimmingCharacters(in: .whitespaces)
            }
            let contact = contact(from: cells, header: header)
            do {
                try ContactValidation.validate(contact)
                contacts.append((contact, row.line))
            } catch {
                problems.append(VCardProblem(line: row.line, message: "line \(row.line): \(error) (row skipped)"))
            }
        }
        return (contacts, problems)
    }

    private static func contact(from cells: [String: String], header: [String]) -> Contact {
        func cell(_ names: String...) -> String {
            names.lazy.compactMap { cells[$0] }.first { !$0.isEmpty } ?? ""
        }
        var contact = Contact(name: "")
        let parts = [
            cell("first name", "given name"), cell("middle name", "additional name"), cell("last name", "family name"),
        ]
        contact.name = cell("name", "display name", "full name")
        if contact.name.isEmpty { contact.name = parts.filter { !$0.isEmpty }.joined(separator: " ") }
        contact.organization = cell("organization 1 - name", "organization name", "company", "organization")
        contact.notes = cell("notes", "note")
        contact.birthday = date(cell("birthday"))
        contact.anniversary = date(cell("anniversary"))
        for index in 1...9 where cells["event \(index) - type"]?.lowercased() == "anniversary" {
            contact.anniversary = contact.anniversary ?? date(cells["event \(index) - value"] ?? "")
        }
        let google = cell("labels", "group membership").components(separatedBy: " ::: ")
        let outlook = cell("categories").split(separator: ";").map(String.init)
        contact.groups = Contact.groupList((google + outlook).filter { !$0.hasPrefix("* ") })
        for name in header {
            guard let value = cells[name], !value.isEmpty else { continue }
            let isEmail = name.contains("e-mail") || name.contains("email")
            let isPhone = name.contains("phone") || name.contains("fax")
            guard (isEmail || isPhone) && !name.contains("type") && !name.contains("display") else { continue }
            let label = Self.label(of: name, cells: cells)
            for item in value.components(separatedBy: " ::: ") where !item.isEmpty {
                let entry = LabeledValue(label: label, value: item)
                if isEmail { contact.emails.append(entry) } else { contact.phones.append(entry) }
            }
        }
        if contact.name.isEmpty { contact.name = contact.emails.first?.value ?? contact.organization }
        for prefix in ["address 1 - ", "business ", "home ", "other "] {
            var address = PostalAddress()
            address.street = cells[prefix + "street"] ?? ""
            address.city = cells[prefix + "city"] ?? ""
            address.region = cells[prefix + "region"] ?? cells[prefix + "state"] ?? ""
            address.postalCode = cells[prefix + "postal code"] ?? ""
            address.country = cells[prefix + "country"] ?? cells[prefix + "country/region"] ?? ""
            if !address.isEmpty {
                contact.address = address
                break
            }
        }
        return contact
    }

    /// A date as Google (ISO 8601) or Outlook (month/day/year, US style) writes it; nil for none or `0/0/00`.
    private static func date(_ text: String) -> ContactDate? {
        if let date = ContactDate(vCard: text) ?? ContactDate(text) { return date }
        let parts = text.split(separator: "/").map { Int($0) }
        guard parts.count == 3, let month = parts[0], let day = parts[1], let year = parts[2], year >= 1000 else {
            return nil
        }
        return ContactDate(year: year, month: month, day: day)
    }

    /// The label of a value column: Google's type column beside it ("* Home" → "home"), else the words of
    /// Outlook's header ("Mobile Phone" → "mobile", "Business Phone" → "work").
    private static func label(of column: String, cells: [String: String]) -> String {
        if column.hasSuffix(" - value") {
            let type = cells[String(column.dropLast(" - value".count)) + " - type"] ?? ""
            return type.trimmingCharacters(in: CharacterSet(charactersIn: "* ")).lowercased()
        }
        let words = column.split(separator: " ")
        switch words.first {
        case "mobile": return "mobile"
        case "business": return "work"
        case "home": return "home"
        default: return ""
        }
    }

    /// The records of a CSV text, each with the line it starts on.
    static func records(_ text: String) -> [(fields: [String], line: Int)] {
        var records: [(fields: [String], line: Int)] = []
        var fields: [String] = []
        var field = ""
        var quoted = false
        var line = 1
        var start = 1
        var characters = text.makeIterator()
        var pending: Character? = nil
        func next() -> Character? {
            if let character = pending {
                pending = nil
                return character
            }
            return characters.next()
        }
        func endRecord() {
            fields.append(field)
            records.append((fields, start))
            fields = []
            field = ""
        }
        while let character = next() {
            if quoted {
                if character == "\"" {
                    let following = next()
                    if following == "\"" {
                        field.append("\"")
                    } else {
                        quoted = false
                        pending = following
                    }
                } else {
                    if character.isNewline { line += 1 }
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"" where field.isEmpty: quoted = true
            case ",":
                fields.append(field)
                field = ""
            case "\r\n", "\n", "\r":
                endRecord()
                line += 1
                start = line
            default: field.append(character)
            }
        }
        if !field.isEmpty || !fields.isEmpty { endRecord() }
        return records
    }
}
