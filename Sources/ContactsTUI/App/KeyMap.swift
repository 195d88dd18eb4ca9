import Terminal

/// Every key the app understands, one table per mode. The app handles keys by looking them up here, and the
/// help overlay and the hint bar are generated from the same tables.
public enum KeyMap {
    /// What the keys do in the contact list.
    public enum BrowseCommand: Sendable, Equatable {
        case down, up, pageDown, pageUp, first, last
        case search, clearSearch, nextBook, books
        case add, edit, editInEditor, delete, mergeDuplicates, conflicts, openPhoto
        case backUp, refresh
        case deleteData
        case help, quit
    }

    /// What the keys do while typing a search.
    public enum SearchCommand: Sendable, Equatable {
        case accept, clear, down, up
    }

    /// What the keys do in the contact form.
    public enum FormCommand: Sendable, Equatable {
        case next, previous, save, cancel
    }

    /// Editing keys shared by every text field: the form, the search, the delete-data prompt.
    public enum TextCommand: Sendable, Equatable {
        case left, right, home, end
        case deleteBackward, deleteForward, deleteToStart, deleteToEnd, deleteWord
    }

    /// What the keys do in the books panel (`B`).
    public enum BooksCommand: Sendable, Equatable {
        case down, up, show, create, rename, share, shareReadOnly, unshare, accept, remove, close
    }

    /// What the keys do in the conflicts panel (`C`).
    public enum ConflictsCommand: Sendable, Equatable {
        case down, up, restore, dismiss, close
    }

    /// What the keys do in the help overlay.
    public enum HelpCommand: Sendable, Equatable {
        case close, down, up, pageDown, pageUp
    }

    /// What the keys do when asked to confirm a deletion; every other key answers no.
    public enum ConfirmCommand: Sendable, Equatable {
        case confirm, cancel
    }

    /// What the keys do in the prompt that asks which data to delete.
    public enum PromptCommand: Sendable, Equatable {
        case confirm, cancel
    }

    /// Keys that work in every mode.
    public enum GlobalCommand: Sendable, Equatable {
        case quit
    }

    public static let global = KeyTable<GlobalCommand>(
        "Anywhere",
        [
            KeyBinding([.control("c")], .quit, help: "quit (changes are already saved on this device)")
        ])

    public static let browsing = KeyTable<BrowseCommand>(
        "Contact list",
        [
            KeyBinding([.character("j"), .down], .down, help: "next contact"),
            KeyBinding([.character("k"), .up], .up, help: "previous contact"),
            KeyBinding([.pageDown], .pageDown, help: "next page"),
            KeyBinding([.pageUp], .pageUp, help: "previous page"),
            KeyBinding([.character("g"), .home], .first, help: "first contact"),
            KeyBinding([.character("G"), .end], .last, help: "last contact"),
            KeyBinding([.character("a")], .add, help: "add a contact", hint: "add", hintPriority: 2),
            KeyBinding(
                [.character("e"), .enter], .edit, help: "edit the selected contact", hint: "edit", hintPriority: 2),
            KeyBinding([.character("E")], .editInEditor, help: "edit the selected contact in $EDITOR"),
            KeyBinding(
                [.character("P")], .openPhoto,
                help: "open the contact's photo ($CONTACTS_PHOTO_VIEWER, else xdg-open), downloading it first"),
            KeyBinding(
                [.character("d")], .delete, help: "delete the selected contact (asks first)", hint: "delete",
                hintPriority: 3),
            KeyBinding(
                [.character("M")], .mergeDuplicates, help: "merge the contact with its likely duplicates (asks)"),
            KeyBinding(
                [.character("C")], .conflicts,
                help: "conflicts: values another device's edit overwrote; put one back"),
            KeyBinding(
                [.character("/")], .search, help: "search all fields (email: org: tel: …)", hint: "search",
                hintPriority: 3),
            KeyBinding([.escape], .clearSearch, help: "clear the search"),
            KeyBinding(
                [.character("f")], .nextBook, help: "show one book at a time, then all books"),
            KeyBinding(
                [.character("B")], .books, help: "books: create, rename, share, accept, leave", hint: "books",
                hintPriority: 5),
            KeyBinding(
                [.character("b")], .backUp, help: "back up now: send this device's changes to the server",
                hint: "back up", hintPriority: 4),
            KeyBinding(
                [.character("r")], .refresh, help: "refresh: fetch changes from the server now", hint: "refresh",
                hintPriority: 4),
            KeyBinding(
                [.character("D")], .deleteData,
                help: "delete this device's data or the server's (asks you to type which)"),
            KeyBinding([.character("?")], .help, help: "show these keys", hint: "help", hintPriority: 1),
            KeyBinding([.character("q")], .quit, help: "quit", hint: "quit", hintPriority: 1),
        ])

    public static let searching = KeyTable<SearchCommand>(
        "Searching (after /)",
        [
            KeyBinding([.enter], .accept, help: "keep the matches and go back to the list", hint: "keep"),
            KeyBinding([.escape], .clear, help: "clear the search", hint: "clear"),
            KeyBinding([.down], .down, help: "next match"),
            KeyBinding([.up], .up, help: "previous match"),
        ])

    public static let form = KeyTable<FormCommand>(
        "Contact form (a, e)",
        [
            KeyBinding([.tab, .down], .next, help: "next field", hint: "next", hintPriority: 2),
            KeyBinding([.backTab, .up], .previous, help: "previous field", hint: "previous", hintPriority: 3),
            KeyBinding([.enter], .save, help: "save the contact", hint: "save", hintPriority: 1),
            KeyBinding([.escape], .cancel, help: "cancel, changing nothing", hint: "cancel", hintPriority: 1),
        ])

    public static let textEditing = KeyTable<TextCommand>(
        "Editing text (form, search, prompts)",
        [
            KeyBinding([.left], .left, help: "move left"),
            KeyBinding([.right], .right, help: "move right"),
            KeyBinding([.home, .control("a")], .home, help: "start of the field"),
            KeyBinding([.end, .control("e")], .end, help: "end of the field"),
            KeyBinding([.backspace], .deleteBackward, help: "delete the character before the cursor"),
            KeyBinding([.delete, .control("d")], .deleteForward, help: "delete the character under the cursor"),
            KeyBinding([.control("u")], .deleteToStart, help: "delete to the start of the field"),
            KeyBinding([.control("k")], .deleteToEnd, help: "delete to the end of the field"),
            KeyBinding([.control("w")], .deleteWord, help: "delete the word before the cursor"),
        ])

    public static let help = KeyTable<HelpCommand>(
        "This help",
        [
            KeyBinding([.escape, .character("?"), .character("q"), .enter], .close, help: "close", hint: "close"),
            KeyBinding([.character("j"), .down], .down, help: "scroll down", hint: "scroll"),
            KeyBinding([.character("k"), .up], .up, help: "scroll up"),
            KeyBinding([.pageDown, .character(" ")], .pageDown, help: "next page"),
            KeyBinding([.pageUp], .pageUp, help: "previous page"),
        ])

    public static let confirmDelete = KeyTable<ConfirmCommand>(
        "Delete this contact?",
        [
            KeyBinding([.character("y"), .character("Y")], .confirm, help: "yes, delete it", hint: "delete"),
            KeyBinding(
                [.character("n"), .character("N"), .escape, .enter], .cancel,
                help: "no, keep it (so does any other key)",
                hint: "keep it"),
        ])

    public static let confirmMerge = KeyTable<ConfirmCommand>(
        "Merge these contacts?",
        [
            KeyBinding([.character("y"), .character("Y")], .confirm, help: "yes, merge them", hint: "merge"),
            KeyBinding(
                [.character("n"), .character("N"), .escape, .enter], .cancel,
                help: "no, keep them apart (so does any other key)", hint: "keep apart"),
        ])

    public static let deleteDataPrompt = KeyTable<PromptCommand>(
        "Delete data (D)",
        [
            KeyBinding([.enter], .confirm, help: "delete what you typed: local or server", hint: "delete"),
            KeyBinding([.escape], .cancel, help: "cancel, deleting nothing", hint: "cancel"),
        ])

    public static let books = KeyTable<BooksCommand>(
        "Books (B)",
        [
            KeyBinding([.character("j"), .down], .down, help: "next book"),
            KeyBinding([.character("k"), .up], .up, help: "previous book"),
            KeyBinding([.enter], .show, help: "show this book's contacts", hint: "show", hintPriority: 1),
            KeyBinding([.character("n")], .create, help: "create a book", hint: "new", hintPriority: 1),
            KeyBinding([.character("r")], .rename, help: "rename the book", hint: "rename", hintPriority: 3),
            KeyBinding(
                [.character("s")], .share, help: "share it read-write with an account (shows the invitation)",
                hint: "share", hintPriority: 2),
            KeyBinding([.character("S")], .shareReadOnly, help: "share it read-only with an account"),
            KeyBinding([.character("u")], .unshare, help: "stop sharing it with an account", hint: "unshare"),
            KeyBinding(
                [.character("A")], .accept, help: "accept an invitation someone gave you", hint: "accept",
                hintPriority: 2),
            KeyBinding(
                [.character("x")], .remove, help: "delete your book, or leave one shared with you (asks first)",
                hint: "delete/leave", hintPriority: 3),
            KeyBinding([.escape, .character("q")], .close, help: "close", hint: "close", hintPriority: 1),
        ])

    public static let conflicts = KeyTable<ConflictsCommand>(
        "Conflicts (C)",
        [
            KeyBinding([.character("j"), .down], .down, help: "next entry"),
            KeyBinding([.character("k"), .up], .up, help: "previous entry"),
            KeyBinding(
                [.character("r"), .enter], .restore, help: "put the lost value back (a new edit that syncs)",
                hint: "restore", hintPriority: 1),
            KeyBinding(
                [.character("x")], .dismiss, help: "dismiss the entry, keeping the contact as it is",
                hint: "dismiss", hintPriority: 2),
            KeyBinding([.escape, .character("q")], .close, help: "close", hint: "close", hintPriority: 1),
        ])

    public static let bookPrompt = KeyTable<PromptCommand>(
        "Books: typing a name, an account or an invitation",
        [
            KeyBinding([.enter], .confirm, help: "do it", hint: "ok"),
            KeyBinding([.escape], .cancel, help: "back to the books, doing nothing", hint: "back"),
        ])

    public static let confirmBookRemoval = KeyTable<ConfirmCommand>(
        "Delete or leave this book?",
        [
            KeyBinding([.character("y"), .character("Y")], .confirm, help: "yes", hint: "yes"),
            KeyBinding(
                [.character("n"), .character("N"), .escape, .enter], .cancel,
                help: "no, keep it (so does any other key)",
                hint: "keep it"),
        ])

    /// The help overlay, generated from the tables above.
    public static func helpSections(unicode: Bool) -> [HelpSection] {
        var sections = [
            browsing.helpSection(unicode: unicode),
            searching.helpSection(unicode: unicode),
            form.helpSection(unicode: unicode),
            textEditing.helpSection(unicode: unicode),
            confirmDelete.helpSection(unicode: unicode),
            confirmMerge.helpSection(unicode: unicode),
            deleteDataPrompt.helpSection(unicode: unicode),
            books.helpSection(unicode: unicode),
            bookPrompt.helpSection(unicode: unicode),
            conflicts.helpSection(unicode: unicode),
            help.helpSection(unicode: unicode),
            global.helpSection(unicode: unicode),
        ]
        // Typing is not a key of its own; say what it does where it matters.
        sections[1].entries.insert(("type", "narrow the list: case and accents are ignored"), at: 0)
        sections[2].entries.insert(
            ("type", "edit the field; emails and phones as label: value, such as work: ada@example.org"), at: 0)
        return sections
    }
}
