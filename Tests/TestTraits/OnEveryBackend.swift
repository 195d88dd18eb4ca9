// Empty without Testing, as AheadOfTheCrowd.swift says.
#if canImport(Testing)
    import Foundation
    import SyncTesting
    import Testing

    /// Runs each test of a suite once per storage backend: on SQLite, then on PostgreSQL when the tests
    /// have one (``TestPostgres``). Servers a test starts with ``TestServer/start`` store on the backend of
    /// the pass. `SYNC_TEST_BACKENDS=sqlite` or `=postgres` runs one pass only, to tell which one fails.
    public struct OnEveryBackend: SuiteTrait, TestTrait, TestScoping {
        public var isRecursive: Bool { true }

        /// Once per test case, not around the suite or the test as a whole.
        public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
            testCase == nil ? nil : self
        }

        public func provideScope(
            for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
        ) async throws {
            for backend in Self.backends {
                try await TestServer.$backend.withValue(backend) { try await function() }
            }
        }

        /// The backends to run on: both when PostgreSQL is configured, else SQLite.
        public static var backends: [TestServer.Backend] {
            let wanted = ProcessInfo.processInfo.environment["SYNC_TEST_BACKENDS"]
            var backends: [TestServer.Backend] = [.sqlite]
            if TestPostgres.url != nil { backends.append(.postgres) }
            return backends.filter { wanted == nil || wanted == $0.rawValue }
        }
    }

    extension Trait where Self == OnEveryBackend {
        /// Each test of the suite runs on SQLite and on PostgreSQL.
        public static var onEveryBackend: Self { OnEveryBackend() }
    }
#endif
