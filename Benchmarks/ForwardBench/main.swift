// Forwarding costs, measured in one run (`make bench`, tools/bench-forward.sh):
//  1. client pipeline per input report: decode + snapshot diff + wire encode + AES-GCM seal, in ns
//     and heap allocations (malloc interposed), over a real DualSense Edge USB recording;
//  2. loopback latency from a report entering the client to the host's virtual-pad write, p50/p99
//     over N reports, with the real PadForwarder and PadServer (TLS 1.3 + sealed UDP) on 127.0.0.1;
//  3. idle cost of both ends with the pad connected and untouched: CPU and datagrams per second.
//  4. (--hostile) the paired client's input latency while the host is attacked (Hostile.swift).
// Usage: ForwardBench RECORDING.hid [reports=100000]   |   ForwardBench --hostile [SECONDS=10]
import CMallocCounter
import Foundation
import Glibc
import HIDCodecs
import PadClient
import PadDevices
import PadHost
import Transport
import WireProtocol

let arguments = CommandLine.arguments
if arguments.count >= 5, arguments[1] == "--attacker" {  // the hostile benchmark's other machines
    runAttacker(port: UInt16(arguments[2]) ?? 0, session: UInt32(arguments[3]) ?? 0, seconds: Double(arguments[4]) ?? 10)
    exit(0)
}
if arguments.count >= 2, arguments[1] == "--hostile" {
    try hostileNetwork(seconds: arguments.count >= 3 ? Double(arguments[2]) ?? 10 : 10)
    exit(0)
}
guard arguments.count >= 2, let text = try? String(contentsOfFile: arguments[1], encoding: .utf8) else {
    print("usage: ForwardBench RECORDING.hid [reports]"); exit(2)
}
let latencyReports = arguments.count >= 3 ? Int(arguments[2]) ?? 100_000 : 100_000
let recording = try HIDRecording(text: text)
let reports = recording.events.map(\.data).filter { $0.first == 0x01 && $0.count == 64 }
guard !reports.isEmpty else { print("no DualSense USB reports in \(arguments[1])"); exit(2) }

// MARK: 1. The client's per-report pipeline

func clientPipeline() throws {
    let slot = PadSlot(0)
    var decoder = ControllerInputDecoder(model: .dualSenseEdge)!
    var state = GamepadState()
    var sender = SnapshotSender(slot: slot)
    var lastTouch = TouchSnapshot(slot: slot)
    var touchSequence = WireSequence(0)
    let calibration = MotionCalibration.nominal
    let keys = DirectionKeys(key: [UInt8](repeating: 7, count: 32), iv: [UInt8](repeating: 9, count: 12))
    let sealer = try DatagramSealer(keys: keys, session: 1)
    var payload = [UInt8](repeating: 0, count: 1400)
    var datagram = [UInt8](repeating: 0, count: 1500)
    var packed = [UInt8](repeating: 0, count: reports.count * 64)
    for (i, r) in reports.enumerated() { packed.replaceSubrange(i * 64..<(i + 1) * 64, with: r) }
    var sealedBytes = 0, statesSent = 0

    func pass(_ raw: UnsafeRawBufferPointer, _ payloadRaw: UnsafeMutableRawBufferPointer, _ out: UnsafeMutableRawBufferPointer, sealing: Bool = true) throws {
        for i in 0..<reports.count {
            try decoder.decode(UnsafeRawBufferPointer(rebasing: raw[i * 64..<(i + 1) * 64]), into: &state)
            var w = WireWriter(payloadRaw)
            try WireCodec.beginPayload(&w)
            if let snapshot = sender.update(PadSnapshots.controls(state, slot: slot), now: .now) {
                try WireCodec.encode(.state(snapshot), into: &w)
                statesSent += 1
            }
            var touch = PadSnapshots.touch(state, slot: slot)
            if touch.first != lastTouch.first || touch.second != lastTouch.second {
                touchSequence = touchSequence.next
                touch.sequence = touchSequence
                lastTouch = touch
                try WireCodec.encode(.touch(touch), into: &w)
            }
            var batch = MotionBatch(slot: slot)
            _ = batch.append(PadSnapshots.motion(state.motion.first, timestampMicros: PadSnapshots.sensorMicros(state), calibration: calibration))
            try WireCodec.encode(.motion(batch), into: &w)
            if sealing { sealedBytes &+= try sealer.seal(UnsafeRawBufferPointer(rebasing: payloadRaw[0..<w.count]), into: out) }
        }
    }

    let iterations = 100
    try packed.withUnsafeBytes { raw in
        try payload.withUnsafeMutableBytes { p in
            try datagram.withUnsafeMutableBytes { out in
                try pass(raw, p, out)  // warm up
                let allocations = padgate_allocation_count()
                let start = ContinuousClock.now
                for _ in 0..<iterations { try pass(raw, p, out) }
                let elapsed = ContinuousClock.now - start
                let n = Double(iterations * reports.count)
                let ns = Double(elapsed / .nanoseconds(1)) / n
                let allocs = Double(padgate_allocation_count() - allocations) / n
                // Where the time goes: the same pass without the AES-GCM seal.
                let unsealedStart = ContinuousClock.now
                for _ in 0..<iterations { try pass(raw, p, out, sealing: false) }
                let unsealed = Double((ContinuousClock.now - unsealedStart) / .nanoseconds(1)) / n
                print(String(format: "client_pipeline reports=%d ns_per_report=%.1f allocations_per_report=%.4f budget_ratio=%.2f (of 500 ns) without_seal_ns=%.1f seal_ns=%.1f states_sent=%d bytes_sealed=%d",
                             Int(n), ns, allocs, ns / 500, unsealed, ns - unsealed, statesSent, sealedBytes))
            }
        }
    }
}

// MARK: 2 and 3. Loopback latency and idle cost, through the real client and host

/// A pad whose reports the benchmark hands in, one at a time, through a pipe the client polls.
final class InjectedPad: PadSource {
    let arrival = PadArrival(slot: PadSlot(0), type: .dualSense, vendorID: 0x054c, productID: 0x0ce6, capabilities: [.analogTriggers], name: "bench pad")
    let lock = NSLock()
    var pending: [UInt8]?
    let wake: (read: Int32, write: Int32)
    var decoder = ControllerInputDecoder(model: .dualSense)!
    var state = GamepadState()
    private(set) var controls: PadStateSnapshot
    let touch: TouchSnapshot

    init() {
        var fds: [Int32] = [0, 0]
        _ = pipe(&fds)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        wake = (fds[0], fds[1])
        controls = .neutral(PadSlot(0))
        touch = TouchSnapshot(slot: PadSlot(0))
    }

    func inject(_ report: [UInt8]) {
        lock.withLock { pending = report }
        var one: UInt8 = 1
        _ = write(wake.write, &one, 1)
    }

    var descriptors: [Int32] { [wake.read] }
    private var drain = (UInt64(0), UInt64(0))   // stack-like scratch: the bench itself allocates nothing per report
    func readInput() throws -> Bool {
        while withUnsafeMutableBytes(of: &drain, { read(wake.read, $0.baseAddress, $0.count) }) > 0 {}
        guard let report = lock.withLock({ defer { pending = nil }; return pending }) else { return false }
        try decoder.decode(report, into: &state)
        controls = PadSnapshots.controls(state, slot: arrival.slot)
        return true
    }
    func takeMotion(_ body: (WireMotionSample) -> Void) {}
    func apply(_ lease: RumbleLease) throws {}
    func apply(_ output: HIDOutputMessage) throws {}
    var feedbackDeadline: ContinuousClock.Instant? { nil }
    func pumpFeedback() throws {}
    func silence() {}
}

/// The host's virtual pad: notes when each state was written.
final class TimedPad: VirtualPad {
    let arrival: PadArrival
    let arrived = DispatchSemaphore(value: 0)
    let lock = NSLock()
    var last: (leftX: Int16, at: ContinuousClock.Instant)?
    init(arrival: PadArrival) { self.arrival = arrival }
    func apply(_ state: PadStateSnapshot) throws {
        let now = ContinuousClock.now
        lock.withLock { last = (state.leftX, now) }
        arrived.signal()
    }
    func apply(_ touch: TouchSnapshot) throws {}
    func apply(_ motion: MotionBatch) throws {}
    var feedbackDescriptors: [Int32] { [] }
    func takeFeedback() throws -> [WireMessage] { [] }
    func remove() {}
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func loopback() throws {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-bench-\(getpid())")
    defer { try? FileManager.default.removeItem(at: state) }
    let hostPads = NSLock()
    var made: TimedPad?
    var configuration = PadServer.Configuration()
    configuration.address = "127.0.0.1"
    configuration.port = 0
    let clientIdentity = try TLSIdentity(directory: state.appendingPathComponent("client"), commonName: "bench client")
    var paired = try FingerprintStore(url: state.appendingPathComponent("paired"))
    try paired.remember("bench client", fingerprint: clientIdentity.fingerprint)
    let server = try PadServer(configuration: configuration, identity: try TLSIdentity(directory: state.appendingPathComponent("host"), commonName: "bench host"),
                               pairedClients: paired,
                               makePad: { arrival in let pad = TimedPad(arrival: arrival); hostPads.withLock { made = pad }; return pad })
    server.log = { _ in }
    var clientConfiguration = PadForwarder.Configuration(host: "127.0.0.1")
    clientConfiguration.port = server.port
    let forwarder = PadForwarder(configuration: clientConfiguration, identity: clientIdentity,
                                 knownHosts: try FingerprintStore(url: state.appendingPathComponent("known_hosts")))
    forwarder.log = { _ in }
    let pad = InjectedPad()
    forwarder.add(pad)
    let stopLock = NSLock()
    var stopped = false
    let stop = { stopLock.withLock { stopped } }
    let serverThread = Thread { server.run(tick: .milliseconds(250), until: stop) }
    let clientThread = Thread { forwarder.run(until: stop) }
    serverThread.start(); clientThread.start()

    var host: TimedPad?
    let deadline = ContinuousClock.now + .seconds(10)
    while host == nil && ContinuousClock.now < deadline { usleep(10_000); host = hostPads.withLock { made } }
    guard let host else { print("loopback: the host never made the pad"); exit(1) }
    while host.arrived.wait(timeout: .now() + .milliseconds(200)) == .success {}  // the initial state

    let encoder = PlayStationInputEncoder(layout: PlayStationLayouts.dualSenseUSB())
    var input = GamepadState.dualSenseAtRest
    var latencies: [Duration] = []
    latencies.reserveCapacity(latencyReports)
    var lost = 0
    let scale = StickScale(minimum: 0, maximum: 255)
    // Reports made before the clock and the allocation count start: what is counted is the real
    // client's and host's loops (both threads of this process), not the benchmark.
    var prepared: [(report: [UInt8], expected: Int16)] = []
    prepared.reserveCapacity(latencyReports)
    for i in 0..<latencyReports {
        let x = UInt16((i % 255) + ((i / 255) % 2 == 0 ? 0 : 1))  // never the same twice in a row
        input.leftStick.x = x == input.leftStick.x ? (x + 1) % 256 : x
        prepared.append((encoder.encode(input), scale.wire(Int32(input.leftStick.x))))
    }
    let traceAllocations = ProcessInfo.processInfo.environment["PADGATE_TRACE_ALLOCATIONS"] == "1"
    let allocationsBefore = padgate_allocation_count()
    if traceAllocations { padgate_allocation_trace(1) }
    for (report, expected) in prepared {
        let sent = ContinuousClock.now
        pad.inject(report)
        var arrivedAt: ContinuousClock.Instant?
        while arrivedAt == nil, host.arrived.wait(timeout: .now() + .seconds(1)) == .success {
            if let last = host.lock.withLock({ host.last }), last.leftX == expected { arrivedAt = last.at }
        }
        if let arrivedAt { latencies.append(arrivedAt - sent) } else { lost += 1 }
    }
    let allocations = padgate_allocation_count() - allocationsBefore
    if traceAllocations { padgate_allocation_trace(0) }
    let allocationsPerReport = Double(allocations) / Double(prepared.count)
    latencies.sort()
    func percentile(_ p: Double) -> Double { Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] / .nanoseconds(1)) / 1000 }
    print(String(format: "loopback_latency reports=%d p50_us=%.1f p99_us=%.1f max_us=%.1f lost=%d p99_ratio=%.2f (of 200 us)",
                 latencies.count, percentile(0.5), percentile(0.99), percentile(1.0), lost, percentile(0.99) / 200))
    // Everything both shipped loops did per report (forward: read, diff, encode, seal, send, poll;
    // serve: receive, open, decode, apply, its timers), keep-alives and pings included.
    print(String(format: "loopback_allocations allocations=%d reports=%d allocations_per_report=%.4f (target 0)", Int(allocations), prepared.count, allocationsPerReport))

    // Idle: the pad connected and untouched.
    usleep(1_000_000)  // let the fast re-sends after the last change finish
    let cpu0 = cpuSeconds(), sent0 = forwarder.status.sent, received0 = forwarder.status.received
    let window = 5.0
    usleep(UInt32(window * 1_000_000))
    let cpu = cpuSeconds() - cpu0
    print(String(format: "idle window_s=%.0f cpu_percent_both_ends=%.3f client_datagrams_per_s=%.1f host_datagrams_per_s=%.1f",
                 window, cpu / window * 100, Double(forwarder.status.sent - sent0) / window, Double(forwarder.status.received - received0) / window))

    stopLock.withLock { stopped = true }
    while !serverThread.isFinished || !clientThread.isFinished { usleep(10_000) }
}

try clientPipeline()
try loopback()
