import GRDB

// The layer's statements run once per row of a batch or a page: each is prepared once per connection and
// kept in GRDB's statement cache, rather than prepared again for every row.
extension Database {
    /// Runs one statement from the cache.
    func executeCached(sql: String, arguments: StatementArguments = []) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}

extension Row {
    static func fetchOne(cached db: Database, sql: String, arguments: StatementArguments = []) throws -> Row? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }
}

extension DatabaseValueConvertible {
    static func fetchOne(cached db: Database, sql: String, arguments: StatementArguments = []) throws -> Self? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }
}
