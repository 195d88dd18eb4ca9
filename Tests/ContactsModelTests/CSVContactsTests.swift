import ContactsModel
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

extension CSVContactsTests {
    @Test("birthdays, anniversaries and groups: Google's labels and events, Outlook's dates and categories")
    func datesAndGroups() throws {
        let google = """
            Name,Birthday,Event 1 - Type,Event 1 - Value,Labels
            Ada Lovelace,1815-12-10,Anniversary,1835-07-08,* myContacts ::: Family ::: Maths
            Grace Hopper,--12-09,,,* starred
            """
        let (googleRows, googleProblems) = CSVContacts.read(utf8: Array(google.utf8))
        #expect(googleProblems.isEmpty)
        let ada = try #require(googleRows.first?.contact)
        #expect(ada.birthday == ContactDate("1815-12-10") && ada.anniversary == ContactDate("1835-07-08"))
        #expect(ada.groups == ["Family", "Maths"])
        #expect(googleRows.last?.contact.birthday == ContactDate("12-09") && googleRows.last?.contact.groups == [])

        let outlook = """
            "First Name","Last Name","Birthday","Anniversary","Categories"
            "Alan","Turing","6/23/1912","0/0/00","Maths;Codebreakers"
            """
        let alan = try #require(CSVContacts.read(utf8: Array(outlook.utf8)).contacts.first?.contact)
        #expect(alan.birthday == ContactDate("1912-06-23") && alan.anniversary == nil)
        #expect(alan.groups == ["Maths", "Codebreakers"])
    }
}
