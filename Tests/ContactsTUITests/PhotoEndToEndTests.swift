import Foundation
import SyncTesting
import TestTraits
import Testing

/// Photos in the full-screen app: the list marks contacts with one, the details say what it is, and P
/// downloads it (on a device that has not yet) and hands the terminal to the person's viewer.
@Suite(
    "End to end: contact photos in the app", .serialized, .aheadOfTheCrowd,
    .enabled(if: EndToEnd.unavailableReason == nil, Comment(rawValue: EndToEnd.unavailableReason ?? "")),
    .timeLimit(.minutes(10)))
struct PhotoEndToEndTests {
    @Test("a photo synced from another device is marked and described; P downloads it and opens the viewer on it")
    func openPhoto() async throws {
        let world = try await EndToEnd(devices: [("b", "ada"), ("a", "ada")])
        defer { world.close() }
        var image = Data([0xFF, 0xD8, 0xFF, 0xE0])
        for index in 0..<30_000 { image.append(UInt8(truncatingIfNeeded: index &* 131 &+ index / 7)) }
        let cards = world.directory.appendingPathComponent("cards.vcf")
        try Data(
            ("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Ada Lovelace\r\nPHOTO:data:image/jpeg;base64,"
                + image.base64EncodedString() + "\r\nEND:VCARD\r\n"
                + "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Grace Hopper\r\nEND:VCARD\r\n").utf8
        ).write(to: cards)
        try await world.cli("a", ["import", cards.path])
        try await world.cli("a", ["sync"])
        try await world.cli("b", ["sync"])
        // The viewer: a script that keeps what it was given to show.
        let shown = world.directory.appendingPathComponent("shown.jpg").path
        let viewer = world.directory.appendingPathComponent("viewer.sh").path
        try "#!/bin/sh\ncp \"$1\" '\(shown)'\n".write(toFile: viewer, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: viewer)

        try world.launch(["b"], environment: ["CONTACTS_PHOTO_VIEWER": viewer])
        let b = world.session("b")
        try await world.waitFor(b, "Ada Lovelace ▣")
        try await world.waitFor(b, "Photo        image/jpeg, 30 KB · P opens it")
        try b.send("P")
        try await world.waitFor(b, "Showed Ada Lovelace's photo.")
        #expect(try Data(contentsOf: URL(fileURLWithPath: shown)) == image)
        try b.send("j")
        try await world.waitFor(b, "› Grace Hopper")
        try b.send("P")
        try await world.waitFor(b, "Grace Hopper has no photo")
    }
}
