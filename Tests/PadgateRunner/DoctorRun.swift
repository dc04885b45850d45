import Foundation

/// `padgate doctor --json` as its report: each check's name, status, detail and fix.
public struct DoctorReport: Decodable {
    public struct Check: Decodable {
        public var check: String
        public var role: String
        public var status: String
        public var detail: String
        public var fix: String?
    }
    public var checks: [Check]
    public var failed: Int
    public var warnings: Int
    public func named(_ name: String) -> Check? { checks.first { $0.check == name } }
    public var problems: [Check] { checks.filter { $0.status == "failed" || $0.status == "warning" } }
}

/// strace(1): every system call that changes a file, a device or the kernel's state, for checking
/// that a command only reads.
public enum SystemChangeTrace {
    public static let strace = URL(fileURLWithPath: "/usr/bin/strace")
    /// Calls that change something by their nature; opens change something by their flags.
    static let changing = ["creat", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2", "link", "linkat",
                           "symlink", "symlinkat", "truncate", "ftruncate", "chmod", "fchmod", "fchmodat", "chown", "fchown", "fchownat", "lchown",
                           "mknod", "mknodat", "utimensat", "setxattr", "fsetxattr", "lsetxattr", "removexattr", "bind", "mount", "umount2",
                           "init_module", "finit_module", "delete_module", "reboot", "sethostname", "settimeofday"]
    static let opens = ["open", "openat", "openat2"]

    /// Runs `padgate arguments` under strace (following children) and returns its run with every
    /// call that changed or could change state (any `changing` call, and any open for writing or
    /// creating) and how many calls it traced (none would mean strace saw nothing).
    public static func run(_ arguments: [String], environment: [String: String] = [:], namespace: String? = nil,
                           timeLimit: Duration = .seconds(120)) throws -> (run: PadgateRun, changes: [String], calls: Int) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-strace-\(UUID())")
        defer { try? FileManager.default.removeItem(at: log) }
        let traced = ["-f", "-qq", "-o", log.path, "-e", "trace=" + (changing + opens).joined(separator: ","), padgateExecutable.path] + arguments
        let run: PadgateRun
        if let namespace, let ip = ipExecutable {
            run = try padgate(["netns", "exec", namespace, strace.path] + traced, environment: environment, timeLimit: timeLimit, executable: ip)
        } else {
            run = try padgate(traced, environment: environment, timeLimit: timeLimit, executable: strace)
        }
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map(String.init)
        let changes = lines.filter { line in
            guard let call = line.split(separator: " ", maxSplits: 1).last?.prefix(while: { $0 != "(" }) else { return false }
            if opens.contains(String(call)) { return ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"].contains { line.contains($0) } }
            return changing.contains(String(call))
        }
        return (run, changes, lines.count)
    }
}
