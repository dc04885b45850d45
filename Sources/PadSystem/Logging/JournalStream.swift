import Glibc

/// Whether standard error is connected to journald: systemd sets `$JOURNAL_STREAM` to the
/// `device:inode` of the stream it gave the service (systemd.exec(5)); a match means stderr is
/// still that stream (not redirected by a wrapper), so `<N>` priority prefixes will be read.
public enum JournalStream {
    public static func isStandardError(_ environment: [String: String], descriptor: FileDescriptor = .standardError) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(descriptor.rawValue, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
