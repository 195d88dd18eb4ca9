import Foundation
import SyncClient
import SyncCore
import SyncCrypto
import Testing

@Suite("Share invitations: the URL an owner hands out")
struct ShareInvitationTests {
    @Test("an invitation reads back as it was printed, with or without a key, on a server with a path")
    func roundTrip() throws {
        let secret = InvitationSecret.generate()
        for server in ["http://127.0.0.1:8080", "https://sync.example.org/contacts/"] {
            for key in [secret, nil] {
                let invitation = ShareInvitation(
                    serverURL: URL(string: server)!, token: "AbCdEfGhIjKlMnOpQrStUv", secret: key)
                let read = try ShareInvitation(" \(invitation.description)\n")
                #expect(read.token == invitation.token)
                #expect(read.secret == key)
                #expect(read.description == invitation.description)
                #expect(!invitation.description.contains("//share"), "\(invitation)")
            }
        }
    }

    @Test("anything else is refused with what an invitation looks like")
    func refused() {
        for text in [
            "", "hello", "ftp://host/share/abc", "http://host/abc", "http:///share/abc", "http://host/share/abc#%%%",
            "http://host/share/abc#AAAA",
        ] {
            let error = #expect(throws: SyncError.self) { try ShareInvitation(text) }
            #expect(error?.code == .invalidArguments, "\(text)")
        }
    }
}
