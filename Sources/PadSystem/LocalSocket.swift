import Foundation
import Glibc

/// Who is at the other end of a local (Unix) socket, as the kernel says (SO_PEERCRED), with the
/// peer's supplementary groups from /proc: a local service decides by these, not by anything the
/// peer claims.
public struct PeerCredentials: Equatable, Sendable {
    public var pid: pid_t
    public var uid: uid_t
    public var gid: gid_t
    /// The primary group and every supplementary one.
    public var groups: Set<gid_t>
}

/// A Unix stream socket: the host's local control socket and its clients.
public enum LocalSocket {
    /// Listens at `path`, replacing a socket file left by an earlier run; the file gets `mode`.
    public static func listening(at path: String, mode: mode_t) throws(SystemCallError) -> OwnedDescriptor {
        let socket = try OwnedDescriptor("socket") { Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0) }
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { unlink(path) }
        _ = try withAddress(path) { address, length throws(SystemCallError) in
            try SystemCall.retrying("bind") { bind(socket.rawValue, address, length) }
        }
        _ = try SystemCall.retrying("chmod") { chmod(path, mode) }
        _ = try SystemCall.retrying("listen") { listen(socket.rawValue, 16) }
        return socket
    }

    /// Connects to the socket at `path` (blocking: a local peer answers at once or not at all).
    public static func connect(to path: String) throws(SystemCallError) -> OwnedDescriptor {
        let socket = try OwnedDescriptor("socket") { Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        _ = try withAddress(path) { address, length throws(SystemCallError) in
            try SystemCall.retrying("connect") { Glibc.connect(socket.rawValue, address, length) }
        }
        return socket
    }

    /// The next waiting connection and its peer, or nil if none waits.
    public static func accept(_ listener: OwnedDescriptor) throws(SystemCallError) -> (OwnedDescriptor, PeerCredentials)? {
        let accepted: CInt
        do {
            accepted = try SystemCall.retrying("accept") { Glibc.accept(listener.rawValue, nil, nil) }
        } catch where error.errno == .wouldBlock {
            return nil
        }
        let connection = OwnedDescriptor(FileDescriptor(rawValue: accepted))
        try connection.descriptor.setCloseOnExec()
        // struct ucred (socket(7)); Glibc shows it only under _GNU_SOURCE, so laid out here.
        struct Credentials { var pid: pid_t = 0; var uid: uid_t = 0; var gid: gid_t = 0 }
        var credentials = Credentials()
        var length = socklen_t(MemoryLayout<Credentials>.size)
        _ = try SystemCall.retrying("getsockopt(SO_PEERCRED)") { getsockopt(accepted, SOL_SOCKET, SO_PEERCRED, &credentials, &length) }
        var groups: Set<gid_t> = [credentials.gid]
        // "Groups:" in /proc/PID/status: the supplementary groups, which SO_PEERCRED leaves out.
        if let status = try? String(contentsOfFile: "/proc/\(credentials.pid)/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Groups:") }) {
            for word in line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }) {
                if let gid = gid_t(word) { groups.insert(gid) }
            }
        }
        return (connection, PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid, groups: groups))
    }

    private static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemCallError) -> T) throws(SystemCallError) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw SystemCallError("socket path \(path)", errno: .nameTooLong)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { for (index, byte) in bytes.enumerated() { $0[index] = byte } }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        return try withUnsafePointer(to: &address) { pointer throws(SystemCallError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddr throws(SystemCallError) in try body(sockaddr, length) }
        }
    }
}

/// Who this process runs as, and the groups it may name, for the control socket's access rule.
public enum ProcessIdentity {
    public static var userID: uid_t { geteuid() }

    /// The id of the group called `name`, if the system has one.
    public static func group(named name: String) -> gid_t? {
        guard let entry = getgrnam(name) else { return nil }
        return entry.pointee.gr_gid
    }
}
