import MonotonicTime

/// Newline-ended lines from a stream (the host's control socket, both ends), each by a deadline
/// and within a size: a peer that dawdles or floods gets an outcome, never a wait or a buffer
/// without end. Bytes after a line are kept for the next one.
public struct LineReader {
    public enum Outcome: Equatable {
        case line([UInt8])
        /// The deadline passed, or a signal arrived (`SignalTrap.fired` tells which).
        case timedOut
        case closed
        case tooLong
    }

    public let descriptor: FileDescriptor
    public let limit: Int
    private var pending: [UInt8] = []

    public init(_ descriptor: FileDescriptor, limit: Int) {
        self.descriptor = descriptor
        self.limit = limit
    }

    public mutating func next(until deadline: MonotonicInstant) -> Outcome {
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            if let end = pending.firstIndex(of: 0x0a) {
                guard end <= limit else { return .tooLong }
                let line = Array(pending[..<end])
                pending.removeSubrange(...end)
                return .line(line)
            }
            guard pending.count <= limit else { return .tooLong }
            guard Poll.wait(for: .readable, on: descriptor, until: deadline) else { return .timedOut }
            let count = (try? buffer.withUnsafeMutableBytes { try descriptor.read(into: $0) }) ?? 0
            guard count > 0 else { return .closed }
            pending += buffer[..<count]
        }
    }
}
