import Foundation
import SyncCore
import SyncServer
import SyncTesting
import TestTraits
import Testing

@Suite("Accounts and sessions", .onEveryBackend)
struct AccountTests {
    @Test("signing up, in and out; the account route names the user")
    func signUpSignInSignOut() async throws {
        try await withServer { _, anonymous in
            let ada = try await anonymous.signedUp(username: "ada")
            let info = try await ada.account()
            #expect(info.username == "ada")
            #expect(info.userRecordName.hasPrefix("_"))

            let second = try await anonymous.signedIn(username: "ada")
            #expect(try await second.account().userRecordName == info.userRecordName)

            let out = try await ada.send(.delete, "/v1/sessions/current")
            #expect(out.status == 204)
            let after = try await ada.send(.get, "/v1/account")
            #expect(after.status == 401)
            #expect(after.error?.code == .notAuthenticated)
            // Signing one session out leaves the others alone.
            #expect(try await second.account().username == "ada")
        }
    }

    @Test("a taken username, a wrong password and bad credentials get clear 4xx answers")
    func badCredentials() async throws {
        try await withServer { _, anonymous in
            _ = try await anonymous.signedUp(username: "ada")
            let taken = await syncError { _ = try await anonymous.signedUp(username: "ADA") }
            #expect(taken?.code == .constraintViolation)
            #expect(taken?.message.contains("taken") == true)

            let wrong = await syncError {
                _ = try await anonymous.signedIn(username: "ada", password: "wrong password")
            }
            #expect(wrong?.code == .notAuthenticated)
            let nobody = await syncError { _ = try await anonymous.signedIn(username: "nobody", password: "whatever1") }
            #expect(nobody?.code == .notAuthenticated)
            #expect(nobody?.message == wrong?.message, "the answer must not reveal whether the user exists")

            for (username, password) in [
                ("", "long enough"), ("a b", "long enough"), ("zoë", "long enough"), ("bob", "short"),
            ] {
                let answer = try await anonymous.send(
                    .post, "/v1/accounts",
                    body: try JSONEncoder().encode(AccountCredentials(username: username, password: password)))
                #expect(answer.status == 400, "\(username)/\(password)")
                #expect(answer.error?.code == .invalidArguments)
            }
        }
    }

    @Test("every data route refuses a missing, malformed or unknown token")
    func dataRoutesNeedAToken() async throws {
        try await withServer { _, anonymous in
            let routes: [(RequestMethod, String)] = [
                (.get, "/v1/account"), (.delete, "/v1/sessions/current"),
                (.post, "/v1/databases/private/zones/list"), (.post, "/v1/databases/private/zones/modify"),
                (.post, "/v1/databases/private/zones/changes"), (.post, "/v1/databases/private/records/modify"),
                (.post, "/v1/databases/private/records/changes"), (.post, "/v1/databases/private/records/lookup"),
                (.get, "/v1/push"),
            ]
            for (method, path) in routes {
                for headers in [[], [("Authorization", "Basic abc")], [("Authorization", "Bearer not-a-token")]] {
                    let answer = try await anonymous.send(method, path, body: Data(json: "{}"), headers: headers)
                    #expect(answer.status == 401, "\(method) \(path) \(headers)")
                    #expect(answer.error?.code == .notAuthenticated)
                }
            }
        }
    }

    @Test("passwords are stored as bcrypt hashes and session tokens only as hashes")
    func secretsAreHashed() async throws {
        try await withServer { server, anonymous in
            let ada = try await anonymous.signedUp(username: "ada", password: "correct horse battery")
            let token = try #require(ada.token)
            let hashes = try await server.storedStrings("password_hash", in: "account")
            let sessions = try await server.storedStrings("token_hash", in: "session")
            #expect(hashes.count == 1)
            #expect(hashes[0].hasPrefix("$2"))
            #expect(!hashes[0].contains("correct horse"))
            #expect(sessions.count == 1)
            #expect(sessions[0] != token)
        }
    }
}
