import Synchronization

/// A value that a test's concurrent tasks share, behind a lock.
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        value.withLock { body(&$0) }
    }

    var current: Value { value.withLock { $0 } }
}
