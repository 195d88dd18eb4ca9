import Terminal

/// One row of a key table: the keys, the command they give, and how the help overlay and the hint bar
/// describe them. The same row both handles the key and documents it, so the two cannot disagree.
public struct KeyBinding<Command: Sendable & Equatable>: Sendable {
    /// The keys that give the command.
    public var keys: [Key]
    /// What the keys do.
    public var command: Command
    /// The help overlay's description.
    public var help: String
    /// The hint bar's word for it (`add`), or nil to leave it out of the hint bar.
    public var hint: String?
    /// Which hints stay when the bar is too narrow for all: lower first.
    public var hintPriority: Int
    /// Shown instead of the keys' names, for keys that are not one key ("type" for any character).
    public var label: String?

    /// A binding of `keys` to `command`.
    public init(
        _ keys: [Key], _ command: Command, help: String, hint: String? = nil, hintPriority: Int = 5,
        label: String? = nil
    ) {
        self.keys = keys
        self.command = command
        self.help = help
        self.hint = hint
        self.hintPriority = hintPriority
        self.label = label
    }

    /// The keys' names as the help overlay shows them: `j ↓`, or the label.
    public func keyNames(unicode: Bool) -> String {
        label ?? keys.map { $0.description(unicode: unicode) }.joined(separator: " ")
    }
}

/// The keys of one mode of the app (browsing, searching, the form…), in the order the help shows them.
public struct KeyTable<Command: Sendable & Equatable>: Sendable {
    /// The heading of this table in the help overlay.
    public var title: String
    /// The bindings; the first one that lists a key wins.
    public var bindings: [KeyBinding<Command>]

    /// A table titled `title`.
    public init(_ title: String, _ bindings: [KeyBinding<Command>]) {
        self.title = title
        self.bindings = bindings
    }

    /// The command `key` gives in this table, if any.
    public func command(for key: Key) -> Command? {
        bindings.first { $0.keys.contains(key) }?.command
    }

    /// This table as the help overlay shows it.
    public func helpSection(unicode: Bool) -> HelpSection {
        HelpSection(title: title, entries: bindings.map { ($0.keyNames(unicode: unicode), $0.help) })
    }

    /// The hints for the hint bar, in table order.
    public func hints(unicode: Bool) -> [Hint] {
        bindings.compactMap { binding in
            binding.hint.map {
                Hint(
                    key: binding.keys.first?.description(unicode: unicode) ?? "", text: $0,
                    priority: binding.hintPriority)
            }
        }
    }
}

/// One table of the help overlay.
public struct HelpSection: Sendable, Equatable {
    /// The heading.
    public var title: String
    /// Key names and what they do.
    public var entries: [(keys: String, help: String)]

    public static func == (lhs: HelpSection, rhs: HelpSection) -> Bool {
        lhs.title == rhs.title && lhs.entries.map(\.keys) == rhs.entries.map(\.keys)
            && lhs.entries.map(\.help) == rhs.entries.map(\.help)
    }
}

/// One entry of the hint bar: `a add`.
public struct Hint: Sendable, Equatable {
    /// The key's name.
    public var key: String
    /// What it does, in a word or two.
    public var text: String
    /// Lower stays longer when space runs out.
    public var priority: Int
}
