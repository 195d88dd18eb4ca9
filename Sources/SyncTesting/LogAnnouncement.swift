import Foundation
import LocalSystem

/// Waits until a program that is starting writes `pattern` (a regular expression) to its log at `path`, as
/// servers say where they listen, and returns the text that matched; nil when `process` exits first.
/// Throws ``WaitTimeout`` with the log when neither happens within `timeout`.
public func announcement(
    _ pattern: String, inLog path: String, of process: ChildProcess? = nil, what: String,
    timeout: Duration = .seconds(60)
) async throws -> String? {
    let printed = { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
    var found: String?
    try await waitUntil(what, timeout: timeout, poll: .milliseconds(20)) {
        let text = printed()
        found = text.range(of: pattern, options: .regularExpression).map { String(text[$0]) }
        return found != nil || process?.isRunning == false
    } observed: {
        printed()
    }
    return found
}
