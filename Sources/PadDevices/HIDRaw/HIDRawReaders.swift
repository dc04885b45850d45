import Foundation
import Glibc

/// Which other processes have a hidraw node open, from `/proc/PID/fd`: hidraw cannot be held
/// exclusively, so `forward` names who could still read a forwarded pad that way (Steam, a game
/// through SDL's HIDAPI drivers, a browser's WebHID). Only processes this user may inspect are seen.
public enum HIDRawReaders {
    public struct Reader: Equatable, Sendable {
        public var pid: Int32
        /// The process's name (`/proc/PID/comm`), as the kernel keeps it: at most 15 bytes.
        public var command: String
    }

    /// Bounded: a machine's process table is read once, at most `limit` processes.
    public static func processes(holding node: String, limit: Int = 4096) -> [Reader] {
        let me = getpid()
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var readers: [Reader] = []
        for entry in entries.prefix(limit) {
            guard let pid = Int32(entry), pid != me else { continue }
            let fds = "/proc/\(entry)/fd"
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: fds) else { continue }
            let holds = names.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fds)/\($0)")) == node }
            guard holds else { continue }
            let command = (try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            readers.append(Reader(pid: pid, command: command))
        }
        return readers.sorted { $0.pid < $1.pid }
    }
}
