import ContactsModel
import ContactsTesting
import Foundation
import LocalSystem
import SyncTesting
import Testing

/// `contacts photo`, `show`, `list --json`, `sync --photos` and `export` with photos, through the built
/// program and its zero-setup local server, as a user runs them.
@Suite(
    "contacts photo: the command line", .serialized,
    .enabled(if: ContactsProgram.isBuilt, "the contacts program is not built"))
struct PhotoCommandTests {
    @Test("import a card with a photo, write it out, see it on another device after a download, set, remove, export")
    func photoCommands() async throws {
        try await withTemporaryDirectory { directory in
            let program = ContactsProgram(dataDirectory: directory)
            defer { program.stopLocalServer() }
            let jpeg = TestPhotos.image(30_000, seed: 9)
            let cards = directory + "/cards.vcf"
            try (TestPhotos.card("Ada Lovelace", v3: jpeg) + TestPhotos.card("Alan Turing", v3: nil))
                .write(toFile: cards, atomically: true, encoding: .utf8)
            let imported = try await program.run(["--device", "laptop", "import", cards])
            #expect(imported.status == 0, "\(imported.error)")
            let listed = try await program.run(["--device", "laptop", "list", "--json"])
            let list = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]] ?? []
            let ada = try #require(list.first { $0["name"] as? String == "Ada Lovelace" })
            let alan = try #require(list.first { $0["name"] as? String == "Alan Turing" })
            let photo = try #require(ada["photo"] as? [String: Any], "list --json says the photo: \(ada)")
            #expect(photo["mediaType"] as? String == "image/jpeg" && photo["size"] as? Int == 30_000)
            #expect(alan["photo"] == nil)
            let adaID = try #require(ada["id"] as? String)
            let alanID = try #require(alan["id"] as? String)

            let out = directory + "/ada.jpg"
            var run = try await program.run(["--device", "laptop", "photo", adaID, "--output", out])
            #expect(run.status == 0, "\(run.error)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == jpeg)
            run = try await program.run(["--device", "laptop", "show", adaID])
            #expect(run.output.contains("Photo:        image/jpeg, 30 KB"), "\(run.output)")
            run = try await program.run(["--device", "laptop", "photo", alanID, "--output", out])
            #expect(run.status != 0 && run.error.contains("Alan Turing has no photo"), "\(run.error)")

            // Another device: the contact comes without its image, which comes when asked for.
            #expect(try await program.run(["--device", "laptop", "sync"]).status == 0)
            #expect(try await program.run(["--device", "phone", "sync"]).status == 0)
            run = try await program.run(["--device", "phone", "show", adaID])
            #expect(run.output.contains("not downloaded yet"), "\(run.output)")
            let phoneOut = directory + "/ada-on-phone.jpg"
            run = try await program.run(["--device", "phone", "photo", adaID, "--output", phoneOut])
            #expect(run.status == 0, "\(run.error)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: phoneOut)) == jpeg)

            // Set on the phone, seen on the laptop; removed on the laptop, gone on the phone.
            let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + TestPhotos.image(5_000, seed: 3)
            let pngFile = directory + "/new.png"
            try png.write(to: URL(fileURLWithPath: pngFile))
            run = try await program.run(["--device", "phone", "photo", adaID, "--set", pngFile])
            #expect(run.status == 0 && run.output.contains("photo set (image/png"), "\(run.output) \(run.error)")
            #expect(try await program.run(["--device", "phone", "sync"]).status == 0)
            run = try await program.run(["--device", "laptop", "sync", "--photos"])
            #expect(run.status == 0 && run.output.contains("photos: 1 downloaded"), "\(run.output) \(run.error)")
            let exported = try await program.run(["--device", "laptop", "export", "--vcard-version", "3"])
            #expect(exported.output.contains("PHOTO;ENCODING=b;TYPE=PNG:"), "\(exported.output.prefix(400))")
            run = try await program.run(["--device", "laptop", "photo", adaID, "--remove"])
            #expect(run.status == 0 && run.output.contains("photo removed"))
            #expect(try await program.run(["--device", "laptop", "sync"]).status == 0)
            #expect(try await program.run(["--device", "phone", "sync"]).status == 0)
            run = try await program.run(["--device", "phone", "show", adaID])
            #expect(!run.output.contains("Photo:"), "\(run.output)")

            // Bad input changes nothing.
            run = try await program.run(["--device", "phone", "photo", adaID, "--set", directory + "/missing.jpg"])
            #expect(run.status != 0 && run.error.contains("cannot read"), "\(run.error)")
            run = try await program.run(["--device", "phone", "photo", adaID, "--set", pngFile, "--remove"])
            #expect(run.status != 0 && run.error.contains("at most one of"), "\(run.error)")
            run = try await program.run(["--device", "phone", "photo", adaID, "--set", pngFile, "--type", "png"])
            #expect(run.status != 0 && run.error.contains("media type"), "\(run.error)")
            run = try await program.run(["--device", "phone", "show", adaID])
            #expect(!run.output.contains("Photo:"), "\(run.output)")
        }
    }
}
