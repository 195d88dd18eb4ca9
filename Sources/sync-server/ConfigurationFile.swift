import ArgumentParser
import Foundation

/// The server's configuration file: settings named as the long options are, one per line.
///
/// ```
/// # /etc/sync-server.conf
/// database = postgres://sync:secret@db.internal:5432/sync
/// host = 0.0.0.0
/// port = 8443
/// tls-certificate = /etc/sync-server/fullchain.pem
/// tls-key = /etc/sync-server/key.pem
/// metrics-listen = 10.0.0.5:9090
/// rate-limit = 100
/// ```
///
/// A value may be put in double quotes; lines starting with `#` and blank lines are skipped. Options on
/// the command line win over the file, so one instance of many can differ in a setting or two. A setting
/// the command takes several times (`cluster = eu=postgres://…`) may be given on several lines.
enum ConfigurationFile {
    /// The option that names the file.
    static let option = "--config"
    /// The settings that may be given more than once.
    static let repeatable: Set<String> = ["cluster"]

    /// `arguments` (the command line without the program's name) with the settings of the file that
    /// `--config` names put before them as options; unchanged without `--config`.
    static func expand(_ arguments: [String], known: Set<String>) throws -> [String] {
        guard let path = try path(in: arguments) else { return arguments }
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "it cannot be read" : "there is no such file"
            throw ValidationError(
                "cannot read the configuration file \(path): \(reason); pass --config with a readable file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ValidationError("the configuration file \(path) is not UTF-8 text")
        }
        return try options(in: text, file: path, known: known) + arguments
    }

    /// The file `--config FILE` or `--config=FILE` names.
    private static func path(in arguments: [String]) throws -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == "--" { return nil }
            if argument == option {
                guard index + 1 < arguments.count else { throw ValidationError("--config needs a file") }
                return arguments[index + 1]
            }
            if argument.hasPrefix(option + "=") { return String(argument.dropFirst(option.count + 1)) }
        }
        return nil
    }

    /// The file's settings as options, in the order written. Fails, naming the file and line, on a line
    /// that is not `name = value`, a name that is not a setting, or a setting given twice.
    static func options(in text: String, file: String, known: Set<String>) throws -> [String] {
        var options: [String] = []
        var seen: [String: Int] = [:]
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = offset + 1
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ValidationError("\(file) line \(number): expected 'name = value', found '\(line.prefix(80))'")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard known.contains(name) else {
                throw ValidationError(
                    "\(file) line \(number): '\(name.prefix(80))' is not a setting; the settings are "
                        + known.sorted().joined(separator: ", "))
            }
            if let first = seen[name], !repeatable.contains(name) {
                throw ValidationError("\(file) line \(number): '\(name)' is already set on line \(first)")
            }
            seen[name] = number
            if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            guard !value.isEmpty else {
                throw ValidationError("\(file) line \(number): '\(name)' has no value")
            }
            options += ["--" + name, value]
        }
        return options
    }
}
