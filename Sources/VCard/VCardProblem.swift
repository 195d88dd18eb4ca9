/// Something in the input that did not become part of a card: a skipped card, or text outside
/// any card. Parsing goes on after every problem.
public struct VCardProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The 1-based physical line of the input where the problem is: the offending line, or the
    /// `BEGIN:VCARD` of a card that never ends.
    public var line: Int
    /// What is wrong, with the line number and what became of the card, for example
    /// `line 14: property without ':' — 'EMAIL;TYPE=work ada@example.org' (card skipped)`.
    public var message: String

    /// Creates a problem.
    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    /// The message, which already names the line.
    public var description: String { message }
}
