import Foundation

/// What can go wrong with the user's input or local data; each message says what to do.
public enum ContactError: Error, Sendable, Hashable, CustomStringConvertible {
    case emptyName
    case tooLong(field: String, limit: Int)
    case controlCharacters(field: String)
    case invalidEmail(String)
    case invalidPhone(String)
    /// `field` is "birthday" or "anniversary".
    case invalidDate(field: String, String)
    case unknownID(String)
    case ambiguousID(String, matches: Int)
    case notAContact(String)
    case damagedRow(offset: Int)
    case readOnlyBook(String, owner: String?)
    /// A downloaded photo is not the image its contact names.
    case photoMismatch(expected: String)
    /// The contact has no photo.
    case noPhoto(String)
    /// A photo's image cannot be had or used; the text says why and what to do.
    case photoFile(String)

    public var description: String {
        switch self {
        case .emptyName:
            "the name is empty; give the contact a name"
        case .tooLong(let field, let limit):
            "the \(field) is too long; keep it under \(limit) characters"
        case .controlCharacters(let field):
            "the \(field) contains control characters (such as escape or bell); remove them"
        case .invalidEmail(let value):
            "'\(value.terminalSafeForMessages)' is not an email address; use the form name@example.org"
        case .invalidPhone(let value):
            "'\(value.terminalSafeForMessages)' is not a phone number; use digits, spaces and + - ( ) . only"
        case .invalidDate(let field, let value):
            "the \(field) '\(value.terminalSafeForMessages)' is not a date; write 1985-04-12, or 04-12 without the year"
        case .unknownID(let id):
            "no contact has the ID '\(id.terminalSafeForMessages)'; the list of contacts shows their IDs"
        case .ambiguousID(let id, let matches):
            "'\(id.terminalSafeForMessages)' matches \(matches) contacts; type more of the ID"
        case .notAContact(let name):
            "the server record \(name) is not a contact"
        case .readOnlyBook(let name, let owner):
            "the book \"\(name.terminalSafeForMessages)\" is shared with you read-only\(owner.map { " by \($0.terminalSafeForMessages)" } ?? ""): "
                + "its contacts cannot be changed here; ask its owner for read-write access"
        case .photoMismatch(let expected):
            "the photo downloaded is not the image its contact names (SHA-256 \(expected.prefix(12))…); nothing was kept: sync again, and if it persists, set the photo again on the device that has it"
        case .photoFile(let text):
            text
        case .noPhoto(let name):
            "\(name.terminalSafeForMessages) has no photo; set one with 'contacts photo ID --set FILE'"
        case .damagedRow(let offset):
            "a contact in this device's store is damaged (unreadable at byte \(offset)); "
                + "deleting this device's local data and syncing again downloads the server's copy"
        }
    }
}

/// The limits and checks every edit passes, from the CLI, the TUI or an import.
public enum ContactValidation {
    public static let nameLimit = 500
    public static let fieldLimit = 1000
    public static let notesLimit = 20_000
    public static let itemLimit = 100

    public static func validate(_ contact: Contact) throws(ContactError) {
        // Only white space and line breaks (which the check below refuses anyway) make no name.
        if contact.name.allSatisfy(\.isWhitespace) { throw .emptyName }
        try check(contact.name, "name", limit: nameLimit)
        try check(contact.organization, "organisation", limit: fieldLimit)
        try check(contact.notes, "note", limit: notesLimit, allowNewlines: true)
        for (part, label) in [
            (contact.address.street, "street"), (contact.address.city, "city"), (contact.address.region, "region"),
            (contact.address.postalCode, "postal code"), (contact.address.country, "country"),
        ] {
            try check(part, label, limit: fieldLimit, allowNewlines: label == "street")
        }
        if contact.groups.count > itemLimit { throw .tooLong(field: "list of groups", limit: itemLimit) }
        for group in contact.groups { try check(group, "group", limit: 100) }
        if contact.emails.count > itemLimit { throw .tooLong(field: "list of emails", limit: itemLimit) }
        if contact.phones.count > itemLimit { throw .tooLong(field: "list of phones", limit: itemLimit) }
        for email in contact.emails {
            try check(email.label, "email label", limit: 100)
            try check(email.value, "email", limit: 254)
            guard isEmail(email.value) else { throw .invalidEmail(email.value) }
        }
        for phone in contact.phones {
            try check(phone.label, "phone label", limit: 100)
            try check(phone.value, "phone", limit: 100)
            guard isPhone(phone.value) else { throw .invalidPhone(phone.value) }
        }
    }

    static func check(_ text: String, _ field: String, limit: Int, allowNewlines: Bool = false) throws(ContactError) {
        // A character takes at least one byte, so most texts need no count of their characters.
        if text.utf8.count > limit && text.count > limit { throw .tooLong(field: field, limit: limit) }
        for scalar in text.unicodeScalars where isControl(scalar) {
            if allowNewlines && (scalar == "\n" || scalar == "\t") { continue }
            throw .controlCharacters(field: field)
        }
    }

    /// The control characters (general category Cc): C0, DEL and C1.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// One `@`, something before it, a dotted domain after it, no spaces.
    public static func isEmail(_ value: String) -> Bool {
        let parts = value.utf8.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].count >= 3 else { return false }
        let domain = parts[1]
        let dot = UInt8(ascii: ".")
        guard domain.contains(dot), domain.first != dot, domain.last != dot,
            !zip(domain, domain.dropFirst()).contains(where: { $0 == dot && $1 == dot })
        else {
            return false
        }
        // Byte by byte for ASCII (Unicode's property tables took a twentieth of an import); other
        // characters are asked whether they are white space.
        if value.utf8.allSatisfy({ $0 < 0x80 }) {
            return !value.utf8.contains { byte in
                switch byte {
                case UInt8(ascii: " "), 0x09...0x0D, UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "<"),
                    UInt8(ascii: ">"):
                    true
                default: false
                }
            }
        }
        return !value.unicodeScalars.contains { scalar in
            scalar.properties.isWhitespace || ",;<>".unicodeScalars.contains(scalar)
        }
    }

    /// Digits with the usual separators; "ext"/"x" for extensions; at least three digits.
    public static func isPhone(_ value: String) -> Bool {
        var digits = 0
        var bytes = value.utf8[...]
        while let byte = bytes.first {
            // Setting bit 5 lower-cases an ASCII letter, and takes no other byte into a...z.
            let lower = byte | 0x20
            if (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower) {
                if lower == UInt8(ascii: "x") {
                    bytes.removeFirst()
                    continue
                }
                let next = bytes.prefix(3).map { $0 | 0x20 }
                guard next == Array("ext".utf8) else { return false }
                bytes.removeFirst(3)
                continue
            }
            if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                digits += 1
            } else if !Self.phoneSeparators.contains(byte) {
                return false
            }
            bytes.removeFirst()
        }
        return digits >= 3
    }

    private static let phoneSeparators = Set("+-(). /#*,;".utf8)
}

extension ContactError {
    /// What part of a contact an input error is about, for a form or a file to point at it, and for an
    /// email or a phone the value at fault when one is; nil for errors that are not about input.
    public var subject: (part: ContactPart, value: String?)? {
        switch self {
        case .emptyName: return (.name, nil)
        case .invalidEmail(let value): return (.email, value)
        case .invalidPhone(let value): return (.phone, value)
        case .invalidDate(let field, _): return (field == "birthday" ? .birthday : .anniversary, nil)
        case .tooLong(let field, _), .controlCharacters(let field):
            let parts: [String: ContactPart] = [
                "name": .name, "organisation": .organization, "note": .notes, "street": .street, "city": .city,
                "region": .region, "postal code": .postalCode, "country": .country, "group": .groups,
                "list of groups": .groups,
            ]
            if let part = parts[field] { return (part, nil) }
            if field.contains("email") { return (.email, nil) }
            if field.contains("phone") { return (.phone, nil) }
            return nil
        default: return nil
        }
    }
}
