// The host on a hostile network (`make bench-hostile`, docs/security.md): a paired client forwards
// a pad at 250 reports/s through the real PadForwarder and PadServer on loopback, first alone, then
// while 100 idle TCP connections, 20 slow TLS handshakes, 50 000 junk datagrams/s and a pairing
// brute force run against the same host. Printed: the client's report-to-virtual-pad latency both
// ways (p99 ratio; target ≤ 2), lease expiries (target 0), the host's RSS growth (target ≤ 5 MB)
// and its descriptors before and after (target: back to the baseline).
import Foundation
import Glibc
import HIDCodecs
import Logging
import MonotonicTime
import PadClient
import PadDevices
import PadHost
import PadSystem
import Transport
import WireProtocol

func hostileNetwork(seconds: Double) throws {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-hostile-\(getpid())")
    defer { try? FileManager.default.removeItem(at: state) }
    let clientIdentity = try TLSIdentity(directory: state.appendingPathComponent("client"), commonName: "bench client")
    var paired = try FingerprintStore(url: state.appendingPathComponent("paired"))
    try paired.remember("bench client", fingerprint: clientIdentity.fingerprint)
    // A second paired client that floods (issue 39): paired is not trusted with the others' share.
    let hostileDirectory = state.appendingPathComponent("hostile-client")
    try paired.remember("hostile client", fingerprint: try TLSIdentity(directory: hostileDirectory, commonName: "hostile client").fingerprint)
    var configuration = PadServer.Configuration()
    configuration.address = "0.0.0.0"
    configuration.port = 0
    let made = LockedValue<TimedPad?>(nil)
    let server = try PadServer(configuration: configuration, identity: try TLSIdentity(directory: state.appendingPathComponent("host"), commonName: "bench host"),
                               pairedClients: paired, makePad: { arrival in let pad = TimedPad(arrival: arrival); made.set(pad); return pad })
    server.logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
    if ProcessInfo.processInfo.environment["PADGATE_HOSTILE_PAIRING_OFF"] == nil { server.enablePairing { _, _ in } }
    var clientConfiguration = PadForwarder.Configuration(host: "127.0.0.1")
    clientConfiguration.port = server.port
    let forwarder = PadForwarder(configuration: clientConfiguration, identity: clientIdentity,
                                 knownHosts: try KnownHostStore(url: state.appendingPathComponent("known_hosts")))
    forwarder.logger = Logger(label: "client") { StreamLogHandler.standardOutput(label: $0) }
    let pad = InjectedPad(), injector = pad.injector
    forwarder.add(pad)
    let stopped = LockedValue(false)
    let figures = ForwarderFigures(forwarder)
    let serverThread = JoinableThread { server.run(tick: .milliseconds(250)) { stopped.value } }
    let clientThread = JoinableThread { forwarder.run { stopped.value } }

    let deadline = MonotonicInstant.now + .seconds(10)
    while made.value == nil && MonotonicInstant.now < deadline { usleep(10_000) }
    guard let host = made.value else { print("hostile: the host never made the pad"); exit(1) }
    while host.arrived.wait(timeout: .now() + .milliseconds(200)) == .success {}
    usleep(500_000)

    // Foundation's Process keeps descriptors of its own (dispatch's epoll, eventfds) once it ran a
    // child: run one before the baseline so that they are in it, not counted as the host's.
    let warmUp = Process()
    warmUp.executableURL = URL(fileURLWithPath: "/bin/true")
    try warmUp.run()
    warmUp.waitUntilExit()
    usleep(100_000)
    let baselineFDs = openDescriptors(), baselineRSS = residentMegabytes()
    let quiet = measureInput(pad: injector, host: host, seconds: seconds)

    // PADGATE_HOSTILE_DECOY=1: the attack goes to a second host in this process instead, to tell
    // what the attack costs the machine from what it costs the attacked host.
    var decoy: (PadServer, Thread)?
    if ProcessInfo.processInfo.environment["PADGATE_HOSTILE_DECOY"] != nil {
        let other = try PadServer(configuration: configuration, identity: try TLSIdentity(directory: state.appendingPathComponent("decoy"), commonName: "decoy"),
                                  pairedClients: try FingerprintStore(url: state.appendingPathComponent("decoy-paired")), makePad: { TimedPad(arrival: $0) })
        other.logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        other.enablePairing { _, _ in }
        let thread = Thread { other.run(tick: .milliseconds(250)) { stopped.value } }
        thread.start()
        decoy = (other, thread)
    }
    // The attackers are another process, as they would be other machines: the host's memory and
    // descriptors are this process's alone.
    let attacker = Process()
    attacker.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    attacker.arguments = ["--attacker", "\(decoy?.0.port ?? server.port)", "\(figures.session)", "\(seconds + 1)"]
    let attackOutput = Pipe()
    attacker.standardOutput = attackOutput
    try attacker.run()
    usleep(1_000_000)  // the attack at full strength before the measurement starts
    let loaded = measureInput(pad: injector, host: host, seconds: seconds)
    let peakRSS = residentMegabytes()
    attacker.waitUntilExit()
    let attackSummary = String(decoding: attackOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    try? attackOutput.fileHandleForReading.close()
    // Every attacker's connection is closed; the host drops what is left at its deadlines.
    usleep(UInt32((Double(configuration.limits.handshakeTimeout.components.seconds) + 1.5) * 1_000_000))
    let afterFDs = openDescriptors(), afterRSS = residentMegabytes()
    let stats = server.statistics
    if afterFDs != baselineFDs, let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
        let targets = names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
        print("hostile_descriptors_left " + Dictionary(grouping: targets, by: { $0.split(separator: ":").first.map(String.init) ?? $0 }).map { "\($0.key):\($0.value.count)" }.sorted().joined(separator: " "))
    }

    print(String(format: "hostile_unloaded reports=%d p50_us=%.1f p99_us=%.1f max_us=%.1f lost=%d",
                 quiet.count, quiet.percentile(0.5), quiet.percentile(0.99), quiet.percentile(1), quiet.lost))
    print(String(format: "hostile_attacked reports=%d p50_us=%.1f p99_us=%.1f max_us=%.1f lost=%d",
                 loaded.count, loaded.percentile(0.5), loaded.percentile(0.99), loaded.percentile(1), loaded.lost))
    print(String(format: "hostile_p99_ratio=%.2f (target <= 2) lease_expiries=%d (target 0) rss_growth_mb=%.1f (peak %.1f, target <= 5) fds_before=%d fds_after=%d",
                 loaded.percentile(0.99) / quiet.percentile(0.99), stats.leaseExpiries, afterRSS - baselineRSS, peakRSS - baselineRSS, baselineFDs, afterFDs))
    print("hostile_attack " + attackSummary)
    print("hostile_host refused=\(stats.refusedConnections.sorted { $0.key < $1.key }.map { "\($0.key.replacingOccurrences(of: " ", with: "_")):\($0.value)" }.joined(separator: ",")) "
          + "datagrams_rejected=\(stats.datagramsRejected.values.reduce(0, +)) pairing_admitted=\(server.pairing?.counters.admitted ?? 0) "
          + "pairing_refused=\((server.pairing?.counters.refusedRateLimited ?? 0) + (server.pairing?.counters.refusedBusy ?? 0))")

    // The paired client's flood: its own session, datagrams packed with 466 messages and small
    // ones far past any real client's rate, from another process at idle priority. Measured in
    // the same run against a quiet phase of its own, after the attack above has left.
    let quietAgain = measureInput(pad: injector, host: host, seconds: seconds)
    let flooder = Process()
    flooder.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    flooder.arguments = ["--paired-attacker", "\(server.port)", hostileDirectory.path, "\(seconds + 1)"]
    let floodOutput = Pipe()
    flooder.standardOutput = floodOutput
    try flooder.run()
    usleep(1_000_000)
    let flooded = measureInput(pad: injector, host: host, seconds: seconds)
    flooder.waitUntilExit()
    let floodSummary = String(decoding: floodOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    let overBudget = server.statistics.datagramsOverBudget
    print(String(format: "hostile_paired_quiet reports=%d p50_us=%.1f p99_us=%.1f lost=%d", quietAgain.count, quietAgain.percentile(0.5), quietAgain.percentile(0.99), quietAgain.lost))
    print(String(format: "hostile_paired_flooded reports=%d p50_us=%.1f p99_us=%.1f lost=%d", flooded.count, flooded.percentile(0.5), flooded.percentile(0.99), flooded.lost))
    print(String(format: "hostile_paired_p99_ratio=%.2f (target <= 1.5) added_lost=%d (target 0) over_budget=%d %@",
                 flooded.percentile(0.99) / quietAgain.percentile(0.99), flooded.lost - quietAgain.lost, overBudget, floodSummary))
    stopped.set(true)
    serverThread.join()
    clientThread.join()
}

/// The paired attacker process: a session of its own, then a datagram flood for `seconds`.
func runPairedAttacker(port: UInt16, identityDirectory: String, seconds: Double) {
    Attack.standInForAnotherMachine()
    do {
        let identity = try TLSIdentity(directory: URL(fileURLWithPath: identityDirectory), commonName: "hostile client")
        let connection = try TLSDialer.connect(host: "127.0.0.1", port: port, identity: identity)
        try connection.send(ControlMessage.hello(version: ControlMessage.protocolVersion, clientName: PeerName(local: "hostile")).encoded())
        guard case .welcome(let session, _, _, _) = try ControlMessage(decoding: connection.receive()) else { print("paired_attacker=refused"); return }
        let sealer = try DatagramSealer(keys: try ControlMessage.datagramKeys(connection).clientToHost, session: session)
        let socket = try DatagramLink.bindSocket(address: "127.0.0.1")
        let peer = try SocketAddress(ip: "127.0.0.1", port: port)
        func sealed(_ payload: [UInt8]) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 2048)
            let n = payload.withUnsafeBytes { bytes in out.withUnsafeMutableBytes { (try? sealer.seal(bytes, into: $0)) ?? 0 } }
            return Array(out[0..<n])
        }
        let end = MonotonicInstant.now + .milliseconds(Int(seconds * 1000))
        var sent = 0
        let packed: [UInt8] = [wireVersion] + (0..<466).flatMap { _ in [UInt8(0xEE), 0, 0] }
        let small: [UInt8] = [wireVersion, 0xEE, 0, 0]
        while MonotonicInstant.now < end {
            // A fresh seal each time: the replay window refuses copies before the budget sees them.
            _ = sealed(sent % 2 == 0 ? packed : small).withUnsafeBytes { try? socket.send($0, to: peer) }
            sent += 1
        }
        print(String(format: "paired_flood_datagrams_per_s=%.0f", Double(sent) / seconds))
        _ = connection
    } catch {
        print("paired_attacker_error=\(error)")
    }
}

struct InputLatencies {
    var sorted: [Duration] = []
    var lost = 0
    var count: Int { sorted.count }
    func percentile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] / .nanoseconds(1)) / 1000
    }
}

/// 250 reports/s into the client, each timed until the host's virtual pad shows it.
func measureInput(pad: ReportInjector, host: TimedPad, seconds: Double) -> InputLatencies {
    let encoder = PlayStationInputEncoder(layout: PlayStationLayouts.dualSenseUSB())
    let scale = StickScale(minimum: 0, maximum: 255)
    var input = GamepadState.dualSenseAtRest
    var result = InputLatencies()
    var next = MonotonicInstant.now
    let end = next + .milliseconds(Int(seconds * 1000))
    var i = 0
    while MonotonicInstant.now < end {
        i += 1
        input.leftStick.x = UInt16(i % 2 == 0 ? 40 + i % 80 : 160 + i % 80)  // never the same twice in a row
        let expected = scale.wire(Int32(input.leftStick.x))
        let sent = MonotonicInstant.now
        pad.inject(encoder.encode(input))
        var arrivedAt: MonotonicInstant?
        while arrivedAt == nil, host.arrived.wait(timeout: .now() + .seconds(1)) == .success {
            if let last = host.lock.withLock({ host.last }), last.leftX == expected { arrivedAt = last.at }
        }
        if let arrivedAt { result.sorted.append(arrivedAt - sent) } else { result.lost += 1 }
        next += .milliseconds(4)
        let wait = next - .now
        if wait > .zero { usleep(UInt32(wait / .microseconds(1))) }
    }
    result.sorted.sort()
    return result
}

/// The attacker process: every attack at once for `seconds`, then a summary line.
func runAttacker(port: UInt16, session: UInt32, seconds: Double) {
    let attack = Attack(port: port, session: session)
    attack.start()
    usleep(UInt32(seconds * 1_000_000))
    attack.stop()
    print(attack.summary(seconds: seconds))
}

/// The attackers, each on its own thread, from addresses other than the client's.
final class Attack: @unchecked Sendable {
    let port: UInt16
    let session: UInt32
    private let running = LockedValue(true)
    private var threads: [Thread] = []
    let connections = LockedValue(0), datagrams = LockedValue(0), pairingAttempts = LockedValue(0)

    init(port: UInt16, session: UInt32) { self.port = port; self.session = session }

    func start() {
        // PADGATE_HOSTILE_ATTACKS=idle,slow,junk,pairing picks some (to see which costs what).
        let chosen = ProcessInfo.processInfo.environment["PADGATE_HOSTILE_ATTACKS"].map { Set($0.split(separator: ",").map(String.init)) }
        let all: [(String, Thread)] = [
            ("idle", Thread { Attack.standInForAnotherMachine(); self.holdConnections(count: 100, firstAddress: 1, slow: false) }),
            ("slow", Thread { Attack.standInForAnotherMachine(); self.holdConnections(count: 20, firstAddress: 100, slow: true) }),
            ("junk", Thread { Attack.standInForAnotherMachine(); self.floodDatagrams(perSecond: 50_000) }),
            ("pairing", Thread { Attack.standInForAnotherMachine(); self.bruteForcePairing() }),
        ]
        threads = all.filter { chosen?.contains($0.0) ?? true }.map(\.1)
        for thread in threads { thread.stackSize = 1 << 20 }
        threads.forEach { $0.start() }
    }

    /// The attackers stand in for other machines: they run only when this one has nothing else to
    /// do (SCHED_IDLE), so that what the benchmark measures is what the host spends on them, not
    /// what they spend attacking. (At nice 19 they still delay a woken thread by up to a scheduler
    /// slice: with the attack aimed at a second, decoy host, the client's p99 rose just as much.)
    static func standInForAnotherMachine() { ThreadPriority.onlyWhenIdle() }

    func stop() {
        running.set(false)
        while threads.contains(where: { !$0.isFinished }) { usleep(10_000) }
    }

    func summary(seconds: Double) -> String {
        String(format: "tcp_connections=%d junk_datagrams_per_s=%.0f pairing_attempts=%d",
               connections.value, Double(datagrams.value) / seconds, pairingAttempts.value)
    }

    /// `count` connections from 127.0.1.x (four per address), each reopened a second after the
    /// host closed it; `slow` ones dribble a TLS ClientHello a byte every 500 ms.
    func holdConnections(count: Int, firstAddress: Int, slow: Bool) {
        var open: [Int32] = Array(repeating: -1, count: count)
        var closedAt: [MonotonicInstant?] = Array(repeating: nil, count: count)
        var lastByte = MonotonicInstant.now
        let hello: [UInt8] = [0x16, 0x03, 0x01, 0x01, 0x00, 0x01, 0x00, 0x00, 0xfc, 0x03, 0x03]
        var sentBytes = Array(repeating: 0, count: count)
        while running.value {
            for i in 0..<count {
                if open[i] >= 0, peerClosed(open[i]) { close(open[i]); open[i] = -1; closedAt[i] = .now }
                if open[i] < 0, closedAt[i].map({ MonotonicInstant.now - $0 >= .seconds(1) }) ?? true {
                    open[i] = connectFrom("127.0.1.\(firstAddress + i / 4)", port: port)
                    sentBytes[i] = 0
                    if open[i] >= 0 { connections.update { $0 += 1 } }
                }
            }
            if slow, MonotonicInstant.now - lastByte >= .milliseconds(500) {
                lastByte = .now
                for i in 0..<count where open[i] >= 0 {
                    var byte = hello[sentBytes[i] % hello.count]
                    _ = send(open[i], &byte, 1, Int32(MSG_NOSIGNAL))
                    sentBytes[i] += 1
                }
            }
            usleep(20_000)
        }
        open.filter { $0 >= 0 }.forEach { close($0) }
    }

    /// Random datagrams, half of them carrying the client's session id so that they reach its
    /// opener (an attacker on the LAN sees session ids in the headers).
    func floodDatagrams(perSecond: Int) {
        guard let socket = try? DatagramLink.bindSocket(address: "127.0.2.1") else { return }
        guard let peer = try? SocketAddress(ip: "127.0.0.1", port: port) else { return }
        var junk = [UInt8](repeating: 0, count: 96)
        var generator = SystemRandomNumberGenerator()
        var next = MonotonicInstant.now
        var sent = 0
        while running.value {
            for _ in 0..<(perSecond / 1000) {
                for i in stride(from: 0, to: junk.count, by: 8) {
                    withUnsafeBytes(of: generator.next() as UInt64) { junk.replaceSubrange(i..<i + 8, with: $0) }
                }
                if sent % 2 == 0 {
                    junk[0] = 0x50; junk[1] = 0x47; junk[2] = 1; junk[3] = 0
                    for k in 0..<4 { junk[4 + k] = UInt8(truncatingIfNeeded: session >> (24 - 8 * UInt32(k))) }
                }
                _ = junk.withUnsafeBytes { try? socket.send($0, to: peer) }
                sent += 1
            }
            datagrams.update { $0 = sent }
            next += .milliseconds(1)
            let wait = next - .now
            if wait > .zero { usleep(UInt32(wait / .microseconds(1))) }
        }
    }

    /// Pairing requests as fast as the host answers them, with one precomputed SPAKE2 share (an
    /// attacker need not finish the exchange to make a guess cost the host).
    func bruteForcePairing() {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-attacker-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let identity = try? TLSIdentity(directory: directory, commonName: "attacker") else { return }
        guard let share = try? Spake2(role: .a, password: Array("000000".utf8), identityA: [1], identityB: [2]).outboundMessage() else { return }
        var address = 1
        while running.value {
            address = address % 200 + 1
            guard let connection = try? TLSDialer.connect(host: "127.0.0.1", port: port, identity: identity, timeout: .seconds(2),
                                                          from: "127.0.3.\(address)") else { continue }
            try? connection.send(ControlMessage.pairStart(share: share, clientName: PeerName(local: "attacker")).encoded())
            _ = try? connection.receive(deadline: .now + .seconds(2))
            pairingAttempts.update { $0 += 1 }
        }
    }

    func connectFrom(_ address: String, port: UInt16) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0, let local = try? SocketAddress(ip: address, port: 0), let remote = try? SocketAddress(ip: "127.0.0.1", port: port) else { return -1 }
        _ = local.withSockaddr { bind(fd, $0, $1) }
        _ = remote.withSockaddr { connect(fd, $0, $1) }
        return fd
    }

    func peerClosed(_ fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINPROGRESS)
    }
}

final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
    func update(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}

func openDescriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }

func residentMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Double(line.split(separator: " ")[1]) else { return .nan }
    return kilobytes / 1024
}
