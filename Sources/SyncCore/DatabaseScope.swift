/// Which of a user's databases a request addresses. Mirrors `CKDatabase.Scope` (without the public database).
public enum DatabaseScope: String, Codable, Sendable, Hashable, CaseIterable {
    /// The user's own data.
    case `private`
    /// Data other users share with this user. Zones cannot be created here.
    case shared
}
