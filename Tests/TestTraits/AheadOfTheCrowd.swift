// `swift build` builds every target, this one too, and a build with the Swift runtime linked in
// (`--static-swift-stdlib`, how the README and INSTALL build the programs to keep) has no Testing module:
// there the target is empty, and the test targets that use it are not built.
#if canImport(Testing)
    import Testing

    /// Runs a test at high task priority. For tests that spend their time waiting on other processes (a terminal
    /// in tmux, a restarted database) rather than computing: with every test started at once, the few threads of
    /// Swift concurrency are busy with the CPU-bound ones, and a waiting test's next step queues behind them; at
    /// a higher priority its steps are taken first, so it ends about when the others do, not minutes after.
    /// Changes no timing the test asserts: it only shortens how long its steps wait for a thread.
    public struct AheadOfTheCrowd: SuiteTrait, TestTrait, TestScoping {
        public var isRecursive: Bool { true }

        public func provideScope(
            for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
        ) async throws {
            // The task ends before this returns, so `function` does not outlive the call.
            try await withoutActuallyEscaping(function) { function in
                try await Task(priority: .high) { try await function() }.value
            }
        }
    }

    extension Trait where Self == AheadOfTheCrowd {
        /// Runs the test at high task priority (``AheadOfTheCrowd``).
        public static var aheadOfTheCrowd: Self { Self() }
    }
#endif
