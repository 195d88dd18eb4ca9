import CoreMetrics
import Foundation
import Prometheus

/// The server's metrics, through swift-metrics into a Prometheus registry that `GET /metrics` shows.
///
/// swift-metrics has one backend per process, which is the program's to choose: a program that
/// serves `/metrics` installs this one at its start (``bootstrap()``), and every server of the process
/// reports into it. The library never installs it itself: a program that installed another backend
/// keeps it, and `/metrics` then shows only what reached this registry.
public enum ServerMetrics {
    /// What `GET /metrics` shows.
    public static let registry = PrometheusCollectorRegistry()

    /// Installs the Prometheus backend, once per process.
    public static func bootstrap() { _ = installed }

    private static let installed: Void = {
        var factory = PrometheusMetricsFactory(registry: registry)
        // Requests and store calls take milliseconds; the buckets reach from 1 ms to 10 s.
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .milliseconds(2500), .seconds(10),
        ]
        MetricsSystem.bootstrap(factory)
    }()

    /// The Prometheus text of every metric.
    static func exposition() -> [UInt8] { registry.emitToBuffer() }

    /// An answered error, by CloudKit code (rate-limited requests are `requestRateLimited`).
    static func countError(code: String) {
        Counter(label: "sync_errors_total", dimensions: [("code", code)]).increment()
    }

    /// A connection closed unanswered (too many at once, or from one address).
    static func countRefusedConnection(reason: String) {
        Counter(label: "sync_refused_connections_total", dimensions: [("reason", reason)]).increment()
    }

    /// Open push sockets of this instance.
    private static let pushSockets = Meter(label: "sync_push_sockets")

    static func pushSocketOpened() { pushSockets.increment() }
    static func pushSocketClosed() { pushSockets.decrement() }

    /// How long one store operation took.
    static func storeTimer(_ operation: String) -> CoreMetrics.Timer {
        CoreMetrics.Timer(label: "sync_store_duration_seconds", dimensions: [("operation", operation)])
    }
}

extension CoreMetrics.Timer {
    /// Records the time from `start` until now.
    func record(since start: ContinuousClock.Instant) {
        let elapsed = (ContinuousClock.now - start).components
        recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
    }
}
