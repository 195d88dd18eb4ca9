#if canImport(Glibc)
    import Glibc
#endif

/// One variable of the process's environment. `ProcessInfo.processInfo.environment` copies every
/// variable into a new dictionary at each call, about a third of a millisecond the first time: a
/// command that reads two or three variables as it starts pays that each time.
public enum EnvironmentVariable {
    /// The value of `name`, nil when it is not set.
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
