import Foundation
import Glibc
import MonotonicTime

/// The service manager's notification protocol (sd_notify(3)): one datagram of `KEY=value` lines
/// to the Unix socket in `$NOTIFY_SOCKET`. `Type=notify` units learn from `READY=1` that the host
/// listens, and a `WatchdogSec=` unit restarts a host whose input loop stops sending `WATCHDOG=1`.
/// Outside systemd (no `$NOTIFY_SOCKET`) every call does nothing.
public final class ServiceManager: @unchecked Sendable {
    private let socket: OwnedDescriptor?
    private let address: sockaddr_un
    private let addressLength: socklen_t
    /// Half of `$WATCHDOG_USEC`, as sd_watchdog_enabled(3) advises; nil without a watchdog.
    public let watchdogInterval: Duration?
    private var lastPing: MonotonicInstant = .now - .seconds(3600)

    /// The one for this process, from its environment.
    public static let shared = ServiceManager(environment: ProcessInfo.processInfo.environment)

    public init(environment: [String: String]) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array((environment["NOTIFY_SOCKET"] ?? "").utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        // "@name" is an abstract socket: its first byte is NUL.
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let usable = (path.first == UInt8(ascii: "/") || path.first == 0) && path.count > 1 && path.count < capacity
        if usable {
            withUnsafeMutableBytes(of: &address.sun_path) { bytes in
                for (index, byte) in path.enumerated() { bytes[index] = byte }
            }
        }
        self.address = address
        addressLength = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        socket = usable ? try? OwnedDescriptor("socket") { Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) } : nil
        // The watchdog is ours only if WATCHDOG_PID is unset or names this process.
        let mine = environment["WATCHDOG_PID"].map { $0 == String(getpid()) } ?? true
        if mine, let text = environment["WATCHDOG_USEC"], let microseconds = Int(text), microseconds > 0 {
            watchdogInterval = .microseconds(microseconds / 2)
        } else {
            watchdogInterval = nil
        }
    }


    /// Sends `state` (`READY=1`, `STOPPING=1`, `STATUS=…`); false if it could not be sent.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        guard let socket else { return false }
        var address = self.address
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                bytes.withUnsafeBytes { buffer in
                    try? SystemCall.retrying("sendto") { sendto(socket.rawValue, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), target, addressLength) }
                }
            }
        }
        return sent == bytes.count
    }

    /// Call from the loop whose liveness matters, as often as it likes: a ping goes out once per
    /// `watchdogInterval`, so a stuck loop misses its deadline and the service is restarted.
    public func watchdogIfDue(now: MonotonicInstant = .now) {
        guard let watchdogInterval, now - lastPing >= watchdogInterval else { return }
        lastPing = now
        notify("WATCHDOG=1")
    }
}
