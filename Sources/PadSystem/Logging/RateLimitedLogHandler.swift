import Foundation
import Logging
import MonotonicTime

/// Passes on at most `linesPerWindow` messages per reason per `window`, for messages about what
/// peers do: a flood of bad connections must not become a flood of log (and of disk, and of the
/// one core that writes it). A message names its reason in the `limit` metadata; messages
/// without one pass unlimited. What was held back is counted once the reason's window ends.
public struct RateLimitedLogHandler: LogHandler {
    /// The metadata key that names a message's reason.
    public static let reasonKey = "limit"
    public static let window: Duration = .seconds(10)
    public static let linesPerWindow = 3

    private var inner: LogHandler
    /// Shared by every copy of the handler (a logger with more metadata is a copy).
    private let windows: Windows

    public init(wrapping inner: LogHandler) {
        self.inner = inner
        windows = Windows()
    }

    public var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    public func log(event: LogEvent) {
        guard let reason = event.metadata?[Self.reasonKey].map({ "\($0)" }) else { return inner.log(event: event) }
        let (show, held) = windows.note(reason, now: .now)
        if held > 0 {
            inner.log(event: LogEvent(level: event.level, message: "(\(held) more like '\(reason)' in the last \(Self.window))",
                                      metadata: nil, source: event.source, file: event.file, function: event.function, line: event.line))
        }
        if show { inner.log(event: event) }
    }

    final class Windows: @unchecked Sendable {
        private let lock = NSLock()
        private var windows: [String: (start: MonotonicInstant, lines: Int, suppressed: Int)] = [:]

        /// Whether to show this line, and how many lines of the reason's last window were held back.
        func note(_ reason: String, now: MonotonicInstant) -> (show: Bool, held: Int) {
            lock.withLock {
                var entry = windows[reason] ?? (now, 0, 0)
                var held = 0
                if now - entry.start >= RateLimitedLogHandler.window { held = entry.suppressed; entry = (now, 0, 0) }
                entry.lines += 1
                let show = entry.lines <= RateLimitedLogHandler.linesPerWindow
                if !show { entry.suppressed += 1 }
                if windows.count > 64, windows[reason] == nil { windows.removeAll() }
                windows[reason] = entry
                return (show, held)
            }
        }
    }
}
