import Foundation

/// Two machines on one LAN for the discovery and IPv6 tests (tools/lan/rig.sh): network namespaces
/// for the host and the client joined by a veth pair, each side with its own dbus-daemon and, when
/// started, its own avahi-daemon. Needs root, iproute2, dbus-daemon and avahi-daemon.
public final class LANRig {
    public enum Side: String { case host = "h", client = "c" }
    public enum Mode: String { case dualStack = "dual", ipv6Only = "ipv6-only" }
    public let name: String
    public let directory: URL
    /// The host's addresses on the LAN (none for IPv4 in `ipv6Only`).
    public let hostIPv4 = "10.78.0.1", hostIPv6 = "fd00:78::1"

    static var script: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("tools/lan/rig.sh")
    }

    /// Why this machine cannot have the rig, or nil when it can.
    public static var missing: String? {
        guard geteuid() == 0 else { return "network namespaces need root" }
        guard ipExecutable != nil else { return "no iproute2 (ip)" }
        for tool in ["/usr/sbin/avahi-daemon", "/usr/bin/dbus-daemon", "/usr/bin/avahi-browse", "/usr/bin/dbus-send"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            return "no \(tool) (make deps installs avahi-daemon, avahi-utils and dbus)"
        }
        return nil
    }

    public init(_ mode: Mode = .dualStack) throws {
        name = "pg\(getpid() % 100_000)\(Int.random(in: 10...99))"
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-lan-\(name)")
        try run(["up", mode.rawValue])
    }

    deinit { down() }

    public func namespace(_ side: Side) -> String { "\(name)-\(side.rawValue)" }
    /// The interface on that side (named as its namespace).
    public func interface(_ side: Side) -> String { namespace(side) }
    /// What a process on that side needs to reach its own avahi-daemon.
    public func environment(_ side: Side) -> [String: String] {
        ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(directory.path)/\(side.rawValue)-bus"]
    }

    public func startAvahi(_ side: Side) throws { try run(["avahi", side.rawValue]) }
    public func stopAvahi(_ side: Side) throws { try run(["stop-avahi", side.rawValue]) }

    /// A stranger's DNS-SD record on that side's LAN, as anyone there can publish one.
    public struct Record {
        public var instance: String
        public var port: Int
        public var txt: [String]
        public init(instance: String, port: Int, txt: [String]) { self.instance = instance; self.port = port; self.txt = txt }
    }

    /// Publishes `records` (`_padgate._udp`) through that side's avahi-daemon and returns once
    /// every one is established; they stay until `down`.
    public func publish(_ records: [Record], on side: Side) throws {
        let file = directory.appendingPathComponent("\(side.rawValue)-records-\(UUID())")
        let text = records.map { ([$0.instance, "\($0.port)"] + $0.txt).joined(separator: "\t") }.joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: file)
        try run(["publish", side.rawValue, file.path])
    }

    public func down() {
        _ = try? run(["down"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// The host side's link-local IPv6 address, with the client's interface as its scope.
    public func hostLinkLocal() throws -> String {
        let out = try shell(["-n", namespace(.host), "-6", "-o", "addr", "show", "dev", interface(.host), "scope", "link"])
        guard let address = out.split(separator: " ").drop(while: { $0 != "inet6" }).dropFirst().first?.split(separator: "/").first else {
            throw RigError("no link-local address on the host side: \(out)")
        }
        return "\(address)%\(interface(.client))"
    }

    /// `ip ARGUMENTS`, its output.
    public func shell(_ arguments: [String]) throws -> String {
        try padgate(arguments, timeLimit: .seconds(30), executable: ipExecutable).stdout
    }

    /// A program other than padgate inside a namespace (`avahi-browse`, say): its output.
    public func run(_ program: String, _ arguments: [String], on side: Side) throws -> String {
        let run = try padgate(["netns", "exec", namespace(side), program] + arguments, environment: environment(side),
                              timeLimit: .seconds(30), executable: ipExecutable)
        return run.stdout
    }

    private func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = Self.script
        process.arguments = [arguments[0], name, directory.path] + arguments.dropFirst()
        // To a file, not a pipe: the daemons the script starts would hold a pipe open for ever.
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-lan-\(name)-\(UUID()).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        process.standardError = handle
        process.standardOutput = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw RigError("tools/lan/rig.sh \(arguments.joined(separator: " ")): \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }
    }

    public struct RigError: Error, CustomStringConvertible {
        public let description: String
        init(_ text: String) { description = text }
    }
}
