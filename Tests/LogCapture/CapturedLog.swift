import Foundation
import Logging
import MonotonicTime
import PadSystem

/// What a logger said, for tests that look at it: each message with when it came. Test-only.
public final class CapturedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(at: MonotonicInstant, message: String)] = []

    public init() {}

    public var messages: [String] { lock.withLock { entries.map(\.message) } }
    public var timed: [(at: MonotonicInstant, message: String)] { lock.withLock { entries } }
    public var count: Int { lock.withLock { entries.count } }

    public func append(_ message: String) { lock.withLock { entries.append((.now, message)) } }

    /// A logger whose every message (at any level) lands here.
    public var logger: Logger { Logger(label: "test") { _ in Handler(log: self) } }

    /// A logger that says nothing.
    public static let silent = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    struct Handler: LogHandler {
        let log: CapturedLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { log.append(event.message.description) }
    }
}
