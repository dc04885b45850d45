import Logging

/// padgate's lines on standard error, as a person reads them: one line per message, compact,
/// `<prefix><client …: ><slot …: >message`. The prefix says who speaks (`padgate serve: `,
/// `host: `), chosen by logger label at bootstrap; the session and slot metadata become words
/// before the message; other metadata follows it in brackets at debug level and below.
/// The one place padgate's own messages are written to stderr.
public struct TerminalLogHandler: LogHandler {
    /// Metadata keys said before the message, in this order.
    public static let leadingKeys = ["client", "slot"]

    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let prefix: String
    private let output: FileDescriptor
    /// Lines start with `<N>`, their syslog priority, for journald (`JournalStream`).
    private let journalPriorities: Bool

    public init(label: String, level: Logger.Level, prefix: (String) -> String, output: FileDescriptor = .standardError,
                journalPriorities: Bool = false) {
        logLevel = level
        self.prefix = prefix(label)
        self.output = output
        self.journalPriorities = journalPriorities
    }

    /// syslog's priority for a level, as sd-daemon(3)'s `<N>` prefixes spell it.
    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = Self.format(prefix: prefix, message: event.message.description,
                               metadata: merged(event.metadata), trailing: logLevel <= .debug)
        if journalPriorities { line = "<\(Self.syslogPriority(event.level))>" + line }
        var bytes = Array((line + "\n").utf8)
        // One write(2) per line: lines from several threads never interleave mid-line.
        _ = try? bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(SystemCallError) in try output.writeAll(UnsafeRawBufferPointer(buffer)) }
        }.get()
    }

    private func merged(_ event: Logger.Metadata?) -> Logger.Metadata {
        var all = metadataProvider?.get() ?? [:]
        all.merge(metadata) { _, handler in handler }
        if let event { all.merge(event) { _, message in message } }
        return all
    }

    /// The line for one message; separate for tests.
    public static func format(prefix: String, message: String, metadata: Logger.Metadata, trailing: Bool) -> String {
        var line = prefix
        for key in leadingKeys { if let value = metadata[key] { line += "\(key) \(value): " } }
        line += message
        let rest = metadata.filter { !leadingKeys.contains($0.key) && $0.key != RateLimitedLogHandler.reasonKey }
        if trailing, !rest.isEmpty {
            line += " [" + rest.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") + "]"
        }
        return line
    }
}

/// Standard error as a terminal for what is not a log line: a status line redrawn in place, a
/// prompt. With the log handler above, the only writers to stderr.
public enum TerminalOutput {
    public static var isTerminal: Bool { FileDescriptor.standardError.isTerminal }

    /// Writes `text` as it is (no newline added).
    public static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = try? bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(SystemCallError) in try FileDescriptor.standardError.writeAll(UnsafeRawBufferPointer(buffer)) }
        }.get()
    }
}
