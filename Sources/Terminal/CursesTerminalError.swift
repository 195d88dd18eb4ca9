/// Why ``CursesTerminal/start()`` could not take over the terminal.
public struct CursesTerminalError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case notATerminal
        case unknownTerminal(String)
    }

    private let code: Code

    /// Standard input or output is not a terminal (a pipe, a file, a service without a TTY).
    public static let notATerminal = CursesTerminalError(code: .notATerminal)

    /// ncurses has no description of the terminal type in `TERM`.
    public static func unknownTerminal(_ name: String) -> CursesTerminalError {
        CursesTerminalError(code: .unknownTerminal(name))
    }

    /// What went wrong and what the user can do about it.
    public var description: String {
        switch code {
        case .notATerminal:
            return "standard input and output must be a terminal; run contacts in a terminal, not through a pipe"
        case .unknownTerminal(""):
            return "TERM is not set; set it to your terminal's type, for example TERM=xterm-256color"
        case .unknownTerminal(let name):
            return "the terminal type \"\(name)\" (TERM) is unknown to ncurses; try TERM=xterm-256color"
        }
    }
}
