import Foundation
import SyncTesting
import TestTraits
import Testing

/// Address books shared between people, in real terminals: Ada (two devices) shares "Family" read-write and
/// "Work" read-only with Grace (one device); each runs the `contacts` app in tmux against one server.
@Suite(
    "End to end: a shared address book in three terminals", .serialized, .aheadOfTheCrowd,
    .enabled(if: EndToEnd.unavailableReason == nil, Comment(rawValue: EndToEnd.unavailableReason ?? "")),
    .timeLimit(.minutes(10)))
struct SharingEndToEndTests {
    @Test(
        "edits flow both ways in Family without a key press; Work refuses Grace's edits; removed, Family leaves Grace's screen; Grace's own book never reaches Ada"
    )
    func sharedBooks() async throws {
        let world = try await EndToEnd(devices: [("ada1", "ada"), ("ada2", "ada"), ("grace", "grace")])
        defer { world.close() }

        // Set up with the command line, as a script would: the invitation alone on standard output.
        try await world.cli("ada1", ["book", "create", "Family"])
        try await world.cli("ada1", ["book", "create", "Work"])
        try await world.cli("ada1", ["add", "--book", "Family", "--name", "Mum"])
        try await world.cli("ada1", ["add", "--book", "Work", "--name", "Boss"])
        try await world.cli("grace", ["add", "--name", "Grace Private"])
        let family = try await world.cli("ada1", ["book", "share", "Family", "--with", "grace"])
        let work = try await world.cli("ada1", ["book", "share", "Work", "--with", "grace", "--read-only"])
        #expect(family.split(separator: "\n").count == 1 && family.contains("/share/"), "only the invitation")
        try await world.cli("grace", ["book", "accept", family])

        try world.launch(["ada1", "ada2", "grace"])
        let (ada, adaPhone, grace) = (world.session("ada1"), world.session("ada2"), world.session("grace"))
        for session in [ada, adaPhone, grace] { try await world.waitFor(session, "Push      connected") }
        try await world.waitFor(grace, "Mum")

        // Grace accepts Work in the app: the books panel (B), accept (A), the invitation pasted.
        try grace.send("B")
        try await world.waitFor(grace, "┌─ Books")
        try grace.send("A")
        try grace.send(work.trimmingCharacters(in: .whitespacesAndNewlines), literal: true)
        try grace.send("Enter")
        try await world.waitFor(grace, "Accepted Work from ada.")
        try await world.waitFor(grace, "ada's, read-only")
        try grace.send("Escape")
        try await world.waitFor(grace, "Boss")

        // Grace edits Mum in Family: both of Ada's screens show it, untouched.
        try grace.send("/")
        try grace.send("Mum", literal: true)
        try grace.send("Enter")
        try await world.waitFor(grace, "Family · ada's, read-write")
        try grace.send("e")
        try grace.send("C-u")
        try grace.send("Mum Lovelace", literal: true)
        try grace.send("Enter")
        try await world.waitFor(grace, "Saved Mum Lovelace")
        try grace.send("Escape")
        try await world.waitFor(ada, "Mum Lovelace")
        try await world.waitFor(adaPhone, "Mum Lovelace")

        // Ada adds to Family from her list of that book: Grace's screen shows it, untouched.
        try ada.send("f")
        try ada.send("f")
        try await world.waitFor(ada, "Book Family")
        try ada.send("a")
        try ada.send("Cousin Ada", literal: true)
        try ada.send("Enter")
        try await world.waitFor(ada, "Saved Cousin Ada")
        try await world.waitFor(grace, "Cousin Ada")

        // Work is read-only for Grace: editing and deleting are refused with the reason.
        try grace.send("/")
        try grace.send("Boss", literal: true)
        try grace.send("Enter")
        try await world.waitFor(grace, "Work · ada's, read-only")
        try grace.send("e")
        try await world.waitFor(grace, "Work is shared with you read-only by ada")
        try grace.send("d")
        try await world.waitFor(grace, "Work is shared with you read-only by ada")
        try grace.send("Escape")

        // Ada (from her phone, its app closed) removes Grace from Family: it leaves Grace's screen by itself.
        try adaPhone.send("q")
        #expect(try await adaPhone.wait { try adaPhone.format("#{pane_dead}") == "1" })
        try await world.cli("ada2", ["book", "unshare", "Family", "grace"])
        // Her list holds her own contact and Ada's Work one; the event log says what left.
        try await world.waitFor(grace, "Contacts · 2")
        try await world.waitFor(grace, "removed by sync: Mum Lovelace")
        let list = try grace.capture().split(separator: "\n").map { $0.prefix(36) }.joined(separator: "\n")
        #expect(list.contains("Boss") && list.contains("Grace Private") && !list.contains("Mum"), "\(list)")

        // Grace's own book is never Ada's.
        try ada.send("f")
        try ada.send("f")
        try await world.waitFor(ada, "Showing every book.")
        #expect(!(try ada.capture().contains("Grace Private")))
        let adaBooks = try await world.cli("ada2", ["book", "list"])
        #expect(!adaBooks.contains("Grace") && adaBooks.contains("Family"))
        #expect(!(try await world.cli("ada2", ["list"]).contains("Grace Private")))
    }
}
