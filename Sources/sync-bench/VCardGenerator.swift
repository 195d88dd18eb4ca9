import Foundation

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

    static func write(count: Int, to file: URL) throws {
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var generator = SplitMix(seed: UInt64(count))
        var chunk = ""
        for index in 0..<count {
            chunk += card(index, &generator)
            if chunk.utf8.count > 1 << 20 {
                try handle.write(contentsOf: Data(chunk.utf8))
                chunk = ""
            }
        }
        try handle.write(contentsOf: Data(chunk.utf8))
    }

    private static func card(_ index: Int, _ random: inout SplitMix) -> String {
        let first = given[random.below(given.count)]
        let last = family[random.below(family.count)]
        var lines = [
            "BEGIN:VCARD", "VERSION:4.0", "UID:bench-\(index)", "FN:\(first) \(last) \(index)", "N:\(last);\(first);;;",
        ]
        let login = "\(first.lowercased().filter(\.isASCII)).\(index)"
        for email in 0..<(1 + random.below(3)) {
            lines.append("EMAIL;TYPE=\(email == 0 ? "home" : "work"):\(login)@\(domains[random.below(domains.count)])")
        }
        for phone in 0..<(1 + random.below(2)) {
            lines.append("TEL;TYPE=\(phone == 0 ? "cell" : "work"):+49 30 \(100_000 + random.below(900_000))")
        }
        let city = cities[random.below(cities.count)]
        lines.append("ADR;TYPE=home:;;\(random.below(200) + 1) Main Street;\(city.0);;\(city.1);\(city.2)")
        if random.below(10) < 8 {
            lines.append("ORG:\(organisations[random.below(organisations.count)])")
            lines.append("TITLE:\(titles[random.below(titles.count)])")
        }
        if random.below(3) == 0 {
            lines.append("NOTE:Met at the conference in Lisbon\\, 2019.\\nPrefers calls after 6pm.")
        }
        lines.append("END:VCARD")
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

/// A small deterministic random number generator (SplitMix64).
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
