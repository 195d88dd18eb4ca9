/// The characters a box is drawn with.
public struct BorderSet: Sendable, Hashable {
    /// The top and bottom edges.
    public var horizontal: Character
    /// The left and right edges.
    public var vertical: Character
    /// The top-left corner.
    public var topLeft: Character
    /// The top-right corner.
    public var topRight: Character
    /// The bottom-left corner.
    public var bottomLeft: Character
    /// The bottom-right corner.
    public var bottomRight: Character
    /// Where a divider meets the left edge.
    public var leftTee: Character
    /// Where a divider meets the right edge.
    public var rightTee: Character

    /// A border from the given characters; each must be one column wide.
    public init(
        horizontal: Character,
        vertical: Character,
        topLeft: Character,
        topRight: Character,
        bottomLeft: Character,
        bottomRight: Character,
        leftTee: Character,
        rightTee: Character
    ) {
        self.horizontal = horizontal
        self.vertical = vertical
        self.topLeft = topLeft
        self.topRight = topRight
        self.bottomLeft = bottomLeft
        self.bottomRight = bottomRight
        self.leftTee = leftTee
        self.rightTee = rightTee
    }

    /// Light box-drawing characters: `┌─┐ │ ├┤ └─┘`.
    public static let unicode = BorderSet(
        horizontal: "─",
        vertical: "│",
        topLeft: "┌",
        topRight: "┐",
        bottomLeft: "└",
        bottomRight: "┘",
        leftTee: "├",
        rightTee: "┤"
    )

    /// Plain ASCII, for terminals that are not in a UTF-8 locale: `+-+ | ++ +-+`.
    public static let ascii = BorderSet(
        horizontal: "-",
        vertical: "|",
        topLeft: "+",
        topRight: "+",
        bottomLeft: "+",
        bottomRight: "+",
        leftTee: "+",
        rightTee: "+"
    )

    /// ``unicode`` when the terminal can show it, otherwise ``ascii``.
    public static func forTerminal(supportsUnicode: Bool) -> BorderSet {
        supportsUnicode ? .unicode : .ascii
    }
}
