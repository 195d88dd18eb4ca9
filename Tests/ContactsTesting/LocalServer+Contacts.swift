import ContactsLocal

extension LocalServer {
    /// The local server of `dataDirectory` as the `contacts` program at `program` starts it
    /// (`contacts server run --detach`).
    public static func ofContacts(dataDirectory: String, program: String) -> LocalServer {
        LocalServer(
            dataDirectory: dataDirectory,
            launchCommand: [program, "server", "run", "--data-dir", dataDirectory, "--detach"])
    }
}
