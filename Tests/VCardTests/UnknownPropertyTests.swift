import Foundation
import Testing
import VCard

@Suite("Properties the app does not model survive a round trip")
struct UnknownPropertyTests {
    static let file = [
        "BEGIN:VCARD",
        "VERSION:3.0",
        "N:Ólafsson;Ólafur;;;",
        "FN:Ólafur Ólafsson",
        "X-SOCIALPROFILE;type=twitter;x-user=olafur:https://social.example.com/olafur",
        "item1.EMAIL;type=INTERNET:olafur@example.org",
        "item1.X-ABLabel:_$!<Other>!$_",
        "item2.X-ABRELATEDNAMES;type=pref:Sigríður",
        "item2.X-ABLabel:_$!<Sister>!$_",
        "X-ANDROID-CUSTOM:vnd.android.cursor.item/nickname;Óli;1;;;;;;;;;;;;;",
        "PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD/",
        "END:VCARD",
    ]

    @Test("X-SOCIALPROFILE, item1.X-ABLabel and PHOTO;ENCODING=b keep their values byte for byte")
    func unknownPropertiesKeepTheirValues() throws {
        let text = Self.file.joined(separator: "\r\n") + "\r\n"
        let card = try #require(VCardParser.parse(text).cards.first)
        let reread = try #require(VCardParser.parse(VCardSerializer.serialize(card)).cards.first)
        #expect(reread == card)
        for name in ["X-SOCIALPROFILE", "X-ABLABEL", "X-ABRELATEDNAMES", "X-ANDROID-CUSTOM", "PHOTO"] {
            let original = Self.file.first {
                $0.uppercased().contains(name + ":") || $0.uppercased().contains(name + ";")
            }
            let value = try #require(original.map { String($0[$0.firstIndex(of: ":")!...].dropFirst()) })
            #expect(reread.first(name)?.value == value)
        }
        #expect(reread.all(inGroup: "item1").map(\.name) == ["EMAIL", "X-ABLABEL"])
        #expect(
            reread.first("X-SOCIALPROFILE")?.parameters == [
                Parameter("TYPE", "twitter"), Parameter("X-USER", "olafur"),
            ])
    }

    @Test("the whole card is written back as it was read, apart from upper-cased names and folding")
    func wholeCardIsWrittenBack() throws {
        let text = Self.file.joined(separator: "\r\n") + "\r\n"
        let written = VCardSerializer.serialize(VCardParser.parse(text).cards)
        let unfolded = written.replacingOccurrences(of: "\r\n ", with: "")
        let expected = text.replacingOccurrences(of: "X-ABLabel", with: "X-ABLABEL")
            .replacingOccurrences(of: ";type=", with: ";TYPE=").replacingOccurrences(of: ";x-user=", with: ";X-USER=")
        #expect(unfolded == expected)
    }
}
