import Foundation
import SyncTesting

/// Writes N realistic vCards, the same for the same N: names from many languages, one to three
/// emails, one or two phones, an address, most with an organisation and title, some with a
/// multi-line note (the shape of ../shared/peerbench's generator, so figures compare).
enum VCardGenerator {
    private static let given = [
        "Zoë", "José", "Łukasz", "Søren", "Anaïs", "Björn", "Chloé", "François", "Jürgen", "Małgorzata", "Niamh",
        "Ingrid", "Mateo", "Olivia", "Liam", "Emma", "Noah", "Hiroshi", "Yuki", "Priya", "Fatima", "Omar", "Ngozi",
    ]
    private static let family = [
        "Müller", "García", "Nowak", "Øberg", "Dubois", "O'Brien", "Smith", "Kowalski", "Rossi", "Novák",
        "Andersson", "Yamamoto", "Patel", "Haddad", "Ivanov", "Okafor", "Silva", "Yılmaz", "van der Berg", "Nguyễn",
    ]
    private static let domains = ["example.com", "example.org", "mail.example.net", "corp.example"]
    private static let cities = [
        ("Berlin", "10115", "Germany"), ("Paris", "75002", "France"), ("Warszawa", "00-001", "Poland"),
        ("København", "1100", "Denmark"), ("上海", "200000", "China"), ("São Paulo", "01310-100", "Brazil"),
    ]
    private static let organisations = ["ACME Corp.", "Initech", "Umbrella GmbH", "北京示例有限公司", "Hooli"]
    private static let titles = ["Engineer", "Manager", "Designer", "CTO", "Teacher", "Consultant"]

    /// With `photoBytes`, each card has a photo of that many bytes (a vCard 4.0 `data:` URI), each image
    /// its own (random bytes after a JPEG header).
    static func write(count: Int, to file: URL, photoBytes: Int = 0) throws {
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var generator = SplitMix64(seed: UInt64(count))
        var chunk = ""
        for index in 0..<count {
            chunk += card(index, &generator, photoBytes: photoBytes)
            if chunk.utf8.count > 1 << 20 {
                try handle.write(contentsOf: Data(chunk.utf8))
                chunk = ""
            }
        }
        try handle.write(contentsOf: Data(chunk.utf8))
    }

    private static func card(_ index: Int, _ random: inout SplitMix64, photoBytes: Int) -> String {
        let first = given.randomElement(using: &random)!
        let last = family.randomElement(using: &random)!
        var lines = [
            "BEGIN:VCARD", "VERSION:4.0", "UID:bench-\(index)", "FN:\(first) \(last) \(index)", "N:\(last);\(first);;;",
        ]
        let login = "\(first.lowercased().filter(\.isASCII)).\(index)"
        for email in 0..<(1 + Int.random(in: 0..<3, using: &random)) {
            lines.append(
                "EMAIL;TYPE=\(email == 0 ? "home" : "work"):\(login)@\(domains.randomElement(using: &random)!)")
        }
        for phone in 0..<(1 + Int.random(in: 0..<2, using: &random)) {
            lines.append(
                "TEL;TYPE=\(phone == 0 ? "cell" : "work"):+49 30 \(100_000 + Int.random(in: 0..<900_000, using: &random))"
            )
        }
        let city = cities.randomElement(using: &random)!
        lines.append(
            "ADR;TYPE=home:;;\(Int.random(in: 0..<200, using: &random) + 1) Main Street;\(city.0);;\(city.1);\(city.2)")
        if Int.random(in: 0..<10, using: &random) < 8 {
            lines.append("ORG:\(organisations.randomElement(using: &random)!)")
            lines.append("TITLE:\(titles.randomElement(using: &random)!)")
        }
        if Int.random(in: 0..<3, using: &random) == 0 {
            lines.append("NOTE:Met at the conference in Lisbon\\, 2019.\\nPrefers calls after 6pm.")
        }
        if photoBytes > 0 {
            lines.append("PHOTO:data:image/jpeg;base64," + image(photoBytes, &random).base64EncodedString())
        }
        lines.append("END:VCARD")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// `count` bytes: a JPEG header, then random bytes (which no compression or deduplication shrinks).
    static func image(_ count: Int, _ random: inout SplitMix64) -> Data {
        var bytes = Data([0xFF, 0xD8, 0xFF, 0xE0])
        bytes.reserveCapacity(count + 8)
        while bytes.count < count { withUnsafeBytes(of: random.next()) { bytes.append(contentsOf: $0) } }
        return bytes.prefix(count)
    }
}
