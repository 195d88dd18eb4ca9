import Foundation
import Testing

@testable import ContactsModel

@Suite("UUIDs read and written as Foundation reads and writes them")
struct UUIDTextTests {
    @Test("the canonical text, either case, reads as Foundation reads it; it is written as uuidString")
    func canonical() {
        for _ in 0..<1000 {
            let id = UUID.random()
            #expect(id.canonicalString == id.uuidString)
            #expect(UUID(canonical: id.uuidString) == id)
            #expect(UUID(canonical: id.uuidString.lowercased()) == id)
        }
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        #expect(zero.canonicalString == zero.uuidString)
        let ones = UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))
        #expect(ones.canonicalString == "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")
    }

    @Test("the canonical text read from its bytes: upper case only, anything else is no UUID")
    func canonicalText() {
        func read(_ text: String) -> UUID? { Array(text.utf8).withUnsafeBytes { UUID(canonicalText: $0) } }
        for _ in 0..<1000 {
            let id = UUID.random()
            #expect(read(id.uuidString) == id)
            #expect(read(id.uuidString.lowercased()) == (id.uuidString == id.uuidString.lowercased() ? id : nil))
        }
        for text in [
            "", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "E621E1F8xC36C-495A-93FC-0C247A3E6E5F",
            "G621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f",
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5f", "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}",
        ] {
            #expect(read(text) == nil, "\(text)")
        }
    }

    @Test("any other text is left to Foundation")
    func others() {
        let texts = [
            "", "not a uuid", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F0",
            "E621E1F8xC36C-495A-93FC-0C247A3E6E5F", "G621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5F ", "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}",
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
        ]
        for text in texts {
            #expect(UUID(canonical: text) == UUID(uuidString: text), "\(text)")
        }
    }

    @Test("user record names as the server makes them read as 16 bytes and write back byte for byte; others are not")
    func userRecordNames() {
        for _ in 0..<1000 {
            let id = UUID.random()
            // How the server names a user record it makes (AccountRoutes).
            let name = "_" + id.uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            #expect(id.userRecordName == name)
            #expect(UUID(userRecordName: name) == id)
            #expect(UUID(userRecordName: name.uppercased()) == nil)
        }
        let names = [
            "", "_", "_grace", "__defaultOwner__", "_e621e1f8c36c495a93fc0c247a3e6e5",
            "_e621e1f8c36c495a93fc0c247a3e6e5f0",
            "-e621e1f8c36c495a93fc0c247a3e6e5f", "_e621e1f8-c36c-495a-93fc-0c247a3e6e5f",
            "_g621e1f8c36c495a93fc0c247a3e6e5f",
            "_E621E1F8C36C495A93FC0C247A3E6E5F", "_e621e1f8c36c495a93fc0c247A3e6e5f",
        ]
        for name in names {
            #expect(UUID(userRecordName: name) == nil, "\(name)")
        }
    }

    @Test("32 hex digits without dashes read in either case; anything else is not a UUID")
    func hexDigits() {
        for _ in 0..<1000 {
            let id = UUID.random()
            let digits = id.uuidString.replacingOccurrences(of: "-", with: "")
            #expect(UUID(hexDigits: digits) == id)
            #expect(UUID(hexDigits: digits.lowercased()) == id)
        }
        for text in [
            "", "E621E1F8C36C495A93FC0C247A3E6E5", "E621E1F8C36C495A93FC0C247A3E6E5F0",
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "G621E1F8C36C495A93FC0C247A3E6E5F",
        ] {
            #expect(UUID(hexDigits: text) == nil, "\(text)")
        }
    }
}
