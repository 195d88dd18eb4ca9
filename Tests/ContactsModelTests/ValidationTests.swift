import ContactsModel
import Foundation
import Testing

@Suite struct ValidationTests {
    @Test func emailsNeedOneAtAndADottedDomain() {
        for good in ["ada@example.com", "a.b+c@mail.example.org", "zoë@exämple.de", "x@y.z"] {
            #expect(ContactValidation.isEmail(good), "\(good)")
        }
        for bad in [
            "", "ada", "@example.com", "ada@", "ada@example", "ada@.example.com", "ada@example.com.",
            "ada@example..com", "a@b@example.com", "ada lovelace@example.com", "ada@exa mple.com", "ada,b@example.com",
            "ada;b@example.com", "<ada@example.com>", "ada@example.com\u{A0}", "ada@e.\u{2003}",
        ] {
            #expect(!ContactValidation.isEmail(bad), "\(bad)")
        }
    }

    /// Addresses in plain ASCII are checked byte by byte: every ASCII character is refused exactly when
    /// it is white space or one of `,;<>`, as in an address with other characters too.
    @Test func everyASCIICharacterIsJudgedAsUnicodeJudgesIt() {
        for value in UInt8(0)..<0x80 where value != UInt8(ascii: "@") {
            let scalar = Unicode.Scalar(value)
            let refused = scalar.properties.isWhitespace || ",;<>".unicodeScalars.contains(scalar)
            let local = "a\(Character(scalar))b"
            #expect(ContactValidation.isEmail(local + "@example.org") == !refused, "byte \(value)")
            #expect(ContactValidation.isEmail(local + "@exämple.org") == !refused, "byte \(value), not ASCII")
        }
    }

    @Test func phonesAreDigitsWithSeparatorsAndExtensions() {
        for good in [
            "+44 20 7946 0958", "(555) 123-4567", "555.123.4567 x12", "555 123 EXT 9", "123", "*310#", "555-1234;,9",
        ] {
            #expect(ContactValidation.isPhone(good), "\(good)")
        }
        for bad in ["", "12", "call me", "555-CALL", "555 e 12", "555 ex 12", "５５５１２３４", "555\u{212A}123", "tel:555"] {
            #expect(!ContactValidation.isPhone(bad), "\(bad)")
        }
    }

    @Test func controlCharactersAreRefusedExceptLineBreaksInNotes() throws {
        var contact = Contact(id: UUID(), name: "Ada")
        contact.notes = "line one\nline two\twith a tab"
        try ContactValidation.validate(contact)
        for text in ["Ada\u{7}", "Ada\u{1B}[31m", "Ada\u{85}", "Ada\u{7F}", "Ada\nLovelace"] {
            var bad = Contact(id: UUID(), name: "Ada")
            bad.name = text
            #expect(throws: ContactError.controlCharacters(field: "name")) { try ContactValidation.validate(bad) }
        }
        var bidi = Contact(id: UUID(), name: "Ada\u{200F}é")
        bidi.organization = "Ω Corp"
        try ContactValidation.validate(bidi)
    }

    @Test func lengthsAreCountedInCharacters() throws {
        // 500 characters of four bytes each pass the name limit; 501 do not.
        try ContactValidation.validate(Contact(id: UUID(), name: String(repeating: "👩", count: 500)))
        #expect(throws: ContactError.tooLong(field: "name", limit: 500)) {
            try ContactValidation.validate(Contact(id: UUID(), name: String(repeating: "e", count: 501)))
        }
    }
}
