import ContactsCore
import Testing
import VCard

@Suite("CSV exports of Google Contacts and Outlook")
struct CSVContactsTests {
    @Test("Google: names, typed emails and phones, several values in one cell, organisation, address, quotes")
    func google() throws {
        let csv =
            "\u{FEFF}First Name,Middle Name,Last Name,Notes,E-mail 1 - Type,E-mail 1 - Value,Phone 1 - Type,Phone 1 - Value,Organization 1 - Name,Address 1 - Street,Address 1 - City,Address 1 - Country\r\n"
            + "Ada,,Lovelace,\"Wrote \"\"the\"\" first program,\nfor the Engine\",* Work,ada@example.org ::: ada@home.example,Mobile,+44 20 7946 0000,Analytical Engines,12 St James's Square,London,UK\r\n"
            + ",,,,,,,,,,,\r\n"
            + "Łukasz,,Nowak,,* Home,lukasz@example.pl,,,,,,\r\n"
            + "Bad,,Email,,,not-an-email,,,,,,\r\n"
        let (rows, problems) = CSVContacts.read(utf8: Array(csv.utf8))
        #expect(rows.map(\.contact.name) == ["Ada Lovelace", "Łukasz Nowak"])
        let ada = try #require(rows.first?.contact)
        #expect(ada.emails.map(\.value) == ["ada@example.org", "ada@home.example"])
        #expect(ada.emails.map(\.label) == ["work", "work"])
        #expect(ada.phones.map(\.label) == ["mobile"] && ada.phones.map(\.value) == ["+44 20 7946 0000"])
        #expect(ada.organization == "Analytical Engines")
        #expect(ada.notes == "Wrote \"the\" first program,\nfor the Engine")
        #expect(ada.address.city == "London" && ada.address.street == "12 St James's Square")
        #expect(rows.map(\.line) == [2, 5])
        #expect(problems.map(\.line) == [6])
        #expect(problems.first?.message.contains("not an email") == true)
    }

    @Test("Outlook: first and last name, E-mail Address columns, phones labelled by their column")
    func outlook() throws {
        let csv = """
            "First Name","Last Name","Company","E-mail Address","E-mail 2 Address","Mobile Phone","Business Phone","Business City"
            "Grace","Hopper","US Navy","grace@navy.example","","+1 555 0100","+1 555 0101","Arlington"
            """
        let (rows, problems) = CSVContacts.read(utf8: Array(csv.utf8))
        #expect(problems.isEmpty)
        let grace = try #require(rows.first?.contact)
        #expect(grace.name == "Grace Hopper" && grace.organization == "US Navy")
        #expect(grace.emails.map(\.value) == ["grace@navy.example"])
        #expect(grace.phones.map(\.label) == ["mobile", "work"])
        #expect(grace.address.city == "Arlington")
    }
}
