/// Runs an async function to its end on the calling thread, when nothing it awaits suspends.
///
/// The shared steps (``StoreTransaction``) are async, for PostgreSQL; on SQLite every one of them
/// runs synchronously inside GRDB's transaction, on GRDB's writer (or reader) queue, where a `Database`
/// may be used. A task that prefers this executor enqueues its jobs here, and ``run(_:)`` runs them
/// where it was called, in order, until the task ends. One that suspended for real (awaiting
/// something no job here will resume) would leave the task unfinished: that is a programming error,
/// and it stops the program rather than return without a result.
final class InlineExecutor: TaskExecutor, @unchecked Sendable {
    /// Touched only on the thread that runs ``run(_:)``: the task's jobs are enqueued from the jobs
    /// themselves, on that thread.
    private var jobs: [UnownedJob] = []

    private init() {}

    func enqueue(_ job: consuming ExecutorJob) {
        jobs.append(UnownedJob(job))
    }

    /// Runs `work` on this thread and returns what it returned, or throws what it threw.
    static func run<Result>(_ work: sending @escaping () async throws -> Result) throws -> Result {
        let executor = InlineExecutor()
        let outcome = Outcome<Result>()
        Task(executorPreference: executor) {
            do { outcome.value = .success(try await work()) } catch { outcome.value = .failure(error) }
        }
        var next = 0
        while next < executor.jobs.count {
            let job = executor.jobs[next]
            next += 1
            job.runSynchronously(on: executor.asUnownedTaskExecutor())
        }
        guard let value = outcome.value else {
            preconditionFailure("a store step suspended inside a SQLite transaction")
        }
        return try value.get()
    }

    /// The task's result, written by its last job and read after it on the same thread.
    private final class Outcome<Value>: @unchecked Sendable {
        var value: Swift.Result<Value, any Error>?
    }
}
