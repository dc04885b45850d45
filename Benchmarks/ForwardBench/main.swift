// Forwarding costs, measured in one run (`make bench`, tools/bench-forward.sh):
//  1. client pipeline per input report: decode + snapshot diff + wire encode + AES-GCM seal, in ns
//     and heap allocations (malloc interposed), over a real DualSense Edge USB recording; once with
//     the continuous gyro calibration `forward` runs by default and once with the stored correction
//     only (no estimator), and the ratio of the two;
//  2. loopback latency from a report entering the client to the host's virtual-pad write, p50/p99
//     over N reports, with the real PadForwarder and PadServer (TLS 1.3 + sealed UDP) on 127.0.0.1;
//  3. idle cost of both ends with the pad connected and untouched: CPU and datagrams per second.
//  4. (--hostile) the paired client's input latency while the host is attacked (Hostile.swift).
// Usage: ForwardBench RECORDING.hid [reports=100000]   |   ForwardBench --hostile [SECONDS=10]
import CMallocCounter
import Foundation
import Glibc
import HIDCodecs
import Logging
import MonotonicTime
import PadClient
import PadDevices
import PadFamilies
import PadHost
import PadSystem
import Synchronization
import Transport
import WireProtocol

let arguments = CommandLine.arguments
if arguments.count >= 5, arguments[1] == "--attacker" {  // the hostile benchmark's other machines
    runAttacker(port: UInt16(arguments[2]) ?? 0, session: UInt32(arguments[3]) ?? 0, seconds: Double(arguments[4]) ?? 10)
    exit(0)
}
if arguments.count >= 5, arguments[1] == "--paired-attacker" {  // a paired client that floods its own session
    runPairedAttacker(port: UInt16(arguments[2]) ?? 0, identityDirectory: arguments[3], seconds: Double(arguments[4]) ?? 10)
    exit(0)
}
if arguments.count >= 2, arguments[1] == "--hostile" {
    try hostileNetwork(seconds: arguments.count >= 3 ? Double(arguments[2]) ?? 10 : 10)
    exit(0)
}
guard arguments.count >= 2, let text = try? String(contentsOfFile: arguments[1], encoding: .utf8) else {
    print("usage: ForwardBench RECORDING.hid [reports]"); exit(2)
}
let latencyReports = arguments.count >= 3 ? Int(arguments[2]) ?? 5_000 : 5_000
let recording = try HIDRecording(text: text)
let reports = recording.events.map(\.data).filter { $0.first == 0x01 && $0.count == 64 }
guard !reports.isEmpty else { print("no DualSense USB reports in \(arguments[1])"); exit(2) }

// MARK: 1. The client's per-report pipeline

/// A pad fed one recorded report at a time, through the report path `forward` ships for hidraw
/// pads (`DecodedReportInput`). Glue only: every property hands through to it.
final class RecordedReportSource: PadSource {
    let arrival: PadArrival
    @exclusivity(unchecked) var input: DecodedReportInput  // as HidrawPadSource's
    init(kind: PadKind, slot: PadSlot, gyroCalibration: GyroCalibrationMode = .continuous) {
        arrival = PadArrival(slot: slot, type: kind, vendorID: 0x054c, productID: kind.canonicalIDs?.product ?? 0,
                             capabilities: [.analogTriggers, .touchpad, .gyro, .accelerometer, .battery], name: "recorded \(kind.displayName)")
        input = DecodedReportInput(decoder: ControllerInputDecoder(PadDrivers.inputCodec(kind, nil)!), slot: slot, calibration: .nominal, gyroCalibration: gyroCalibration)
    }
    var descriptors: [FileDescriptor] { [] }
    func readInput() throws -> Bool { true }
    var controls: PadStateSnapshot { input.controls }
    var touch: TouchSnapshot { input.touch }
    var battery: BatteryReport? { input.battery }
    func takeMotion(_ body: (WireMotionSample) -> Void) { input.takeMotion(body) }
    func apply(_ lease: RumbleLease) throws {}
    func apply(_ output: HIDOutputMessage) throws {}
    var feedbackDeadline: MonotonicInstant? { nil }
    func pumpFeedback() throws {}
    func silence() {}
}

/// What `PadForwarder` keeps between reports for one pad, kept the way it keeps it (a class whose
/// per-report state skips runtime exclusivity checks), so the timed calls run as they do there.
final class ClientLoopState {
    let source: RecordedReportSource
    @exclusivity(unchecked) var pad: ForwardedPad
    @exclusivity(unchecked) var outbox = OutgoingPayloads()
    let sealer: DatagramSealer
    @exclusivity(unchecked) var datagram = [UInt8](repeating: 0, count: 1500)
    /// Ticks per stage per report (decode, diff and encode, seal); the seal column is 0 for a
    /// report that sent nothing.
    @exclusivity(unchecked) var ticks: [[UInt64]]
    @exclusivity(unchecked) var sealedBytes = 0, datagrams = 0

    init(reports: Int, gyroCalibration: GyroCalibrationMode) throws {
        source = RecordedReportSource(kind: .dualSenseEdge, slot: PadSlot(0), gyroCalibration: gyroCalibration)
        pad = ForwardedPad(source)
        _ = pad.announcement(now: .now)  // as forward does when the link comes up: collect sends nothing before
        let keys = DirectionKeys(key: [UInt8](repeating: 7, count: 32), iv: [UInt8](repeating: 9, count: 12))
        sealer = try DatagramSealer(keys: keys, session: 1)
        ticks = [[UInt64]](repeating: [UInt64](repeating: 0, count: reports), count: 3)
    }

    /// One report, the way the forwarding loop handles it, each stage timed.
    @inline(__always)
    func handle(_ report: UnsafeRawBufferPointer, record: Int?) {
        let t0 = padgate_ticks()
        _ = source.input.ingest(report)
        let t1 = padgate_ticks()
        pad.collect(now: MonotonicInstant.now, into: &outbox)
        var sealTicks: UInt64 = 0
        outbox.drain { bytes in
            let sealStart = padgate_ticks()
            sealedBytes &+= datagram.withUnsafeMutableBytes { (try? sealer.seal(bytes, into: $0)) ?? 0 }
            sealTicks += padgate_ticks() - sealStart
            datagrams += 1
        }
        let t2 = padgate_ticks()
        guard let r = record else { return }
        ticks[0][r] = t1 - t0
        ticks[1][r] = t2 - t1 - sealTicks
        ticks[2][r] = sealTicks
    }
}

/// Each stage of the client's per-report work, timed directly with the CPU's time-stamp counter
/// around the shipped calls `forward` makes for a hidraw pad: decode (`DecodedReportInput.ingest`:
/// the typed decoder and the conversion to wire snapshots), diff and encode (`ForwardedPad.collect`
/// into `OutgoingPayloads`: what changed, motion thinning, the messages written into the payload,
/// with the loop's clock read) and seal (`DatagramSealer.seal`). The send(2) after it is the kernel's, not ours.
@discardableResult
func clientPipeline(gyroCalibration: GyroCalibrationMode) throws -> (medianSent: Double, mean: Double) {
    let passes = Int(ProcessInfo.processInfo.environment["PADGATE_BENCH_PASSES"] ?? "") ?? 20, n = passes * reports.count
    let loop = try ClientLoopState(reports: n, gyroCalibration: gyroCalibration)
    var result = (0.0, 0.0)
    var packed = [UInt8](repeating: 0, count: reports.count * 64)
    for (i, r) in reports.enumerated() { packed.replaceSubrange(i * 64..<(i + 1) * 64, with: r) }

    packed.withUnsafeBytes { raw in
        for i in 0..<reports.count { loop.handle(UnsafeRawBufferPointer(rebasing: raw[i * 64..<(i + 1) * 64]), record: nil) }  // warm up
        let allocations = padgate_allocation_count()
        let startTicks = padgate_ticks(), start = MonotonicInstant.now
        for p in 0..<passes {
            for i in 0..<reports.count { loop.handle(UnsafeRawBufferPointer(rebasing: raw[i * 64..<(i + 1) * 64]), record: p * reports.count + i) }
        }
        let elapsed = MonotonicInstant.now - start, elapsedTicks = padgate_ticks() - startTicks
        let nsPerTick = Double(elapsed / .nanoseconds(1)) / Double(elapsedTicks)
        let allocs = Double(padgate_allocation_count() - allocations) / Double(n)
        let ticks = loop.ticks
        func median(_ column: [UInt64]) -> Double {
            let sorted = column.filter { $0 > 0 }.sorted()
            return sorted.isEmpty ? 0 : Double(sorted[sorted.count / 2]) * nsPerTick
        }
        // Per report, hidraw bytes in to sealed datagram out: the four stages' sum, median.
        let totals = (0..<n).map { ticks[0][$0] + ticks[1][$0] + ticks[2][$0] }
        let total = median(totals)
        let sentTotal = median((0..<n).map { ticks[2][$0] > 0 ? totals[$0] : 0 })
        let mean = Double(elapsed / .nanoseconds(1)) / Double(n)
        result = (sentTotal, mean)
        // A stage that measured nothing fails the bench (issue 59: a pad never announced sent nothing and printed zeros).
        let stages = ["decode": median(ticks[0]), "diff_encode": median(ticks[1]), "seal": median(ticks[2]), "sent": sentTotal]
        for (stage, value) in stages.sorted(by: { $0.key < $1.key }) where value <= 0 {
            print("client_pipeline: the \(stage) stage measured nothing (\(loop.datagrams) datagrams sealed over \(n) reports)"); exit(1)
        }
        print("client_pipeline gyro=\(gyroCalibration.rawValue) " + String(format: "reports=%d median_ns=%.1f median_sent_ns=%.1f mean_ns=%.1f budget_ratio=%.2f (of 450 ns) decode_ns=%.1f diff_encode_ns=%.1f seal_ns=%.1f allocations_per_report=%.4f datagrams=%d bytes_sealed=%d",
                     n, total, sentTotal, mean, sentTotal / 450, median(ticks[0]), median(ticks[1]), median(ticks[2]),
                     allocs, loop.datagrams, loop.sealedBytes))
    }
    return result
}

// MARK: 2 and 3. Loopback latency and idle cost, through the real client and host

/// A pad whose reports the benchmark hands in, one at a time, through a pipe the client polls.
/// The bench's side of an `InjectedPad`: hands a report to the forwarder's thread, from any thread.
final class ReportInjector: Sendable {
    let pending = LockedBox<[UInt8]?>(nil)
    let wake: (read: Int32, write: Int32)

    init() {
        var fds: [Int32] = [0, 0]
        _ = pipe(&fds)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        wake = (fds[0], fds[1])
    }

    func inject(_ report: [UInt8]) {
        pending.update { $0 = report }
        var one: UInt8 = 1
        _ = write(wake.write, &one, 1)
    }
}

final class InjectedPad: PadSource {
    let arrival = PadArrival(slot: PadSlot(0), type: .dualSense, vendorID: 0x054c, productID: 0x0ce6, capabilities: [.analogTriggers], name: "bench pad")
    let injector = ReportInjector()
    /// The report path `forward` ships for hidraw pads.
    var input = DecodedReportInput(decoder: ControllerInputDecoder(PlayStationInputCodec.dualSense), slot: PadSlot(0), calibration: .nominal)
    var controls: PadStateSnapshot { input.controls }
    var touch: TouchSnapshot { input.touch }

    var descriptors: [FileDescriptor] { [FileDescriptor(rawValue: injector.wake.read)] }
    private var drain = (UInt64(0), UInt64(0))   // stack-like scratch: the bench itself allocates nothing per report
    func readInput() throws -> Bool {
        while withUnsafeMutableBytes(of: &drain, { read(injector.wake.read, $0.baseAddress, $0.count) }) > 0 {}
        guard let report = injector.pending.withLock({ pending in defer { pending = nil }; return pending }) else { return false }
        return report.withUnsafeBytes { input.ingest($0) }
    }
    func takeMotion(_ body: (WireMotionSample) -> Void) {}
    func apply(_ lease: RumbleLease) throws {}
    func apply(_ output: HIDOutputMessage) throws {}
    var feedbackDeadline: MonotonicInstant? { nil }
    func pumpFeedback() throws {}
    func silence() {}
}

/// The host's virtual pad: notes when each state was written.
final class TimedPad: VirtualPad {
    let arrival: PadArrival
    let arrived = DispatchSemaphore(value: 0)
    let lock = NSLock()
    var last: (leftX: Int16, at: MonotonicInstant)?
    init(arrival: PadArrival) { self.arrival = arrival }
    func apply(_ state: PadStateSnapshot) throws {
        let now = MonotonicInstant.now
        lock.withLock { last = (state.leftX, now) }
        arrived.signal()
    }
    func apply(_ touch: TouchSnapshot) throws {}
    func apply(_ motion: MotionBatch) throws {}
    var feedbackDescriptors: [FileDescriptor] { [] }
    func takeFeedback(into messages: inout [WireMessage]) throws {}
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
    let made = LockedBox<TimedPad?>(nil)
    var configuration = PadServer.Configuration()
    configuration.address = "127.0.0.1"
    configuration.port = 0
    let clientIdentity = try TLSIdentity(directory: state.appendingPathComponent("client"), commonName: "bench client")
    var paired = try FingerprintStore(url: state.appendingPathComponent("paired"))
    try paired.remember("bench client", fingerprint: clientIdentity.fingerprint)
    let server = try PadServer(configuration: configuration, identity: try TLSIdentity(directory: state.appendingPathComponent("host"), commonName: "bench host"),
                               pairedClients: paired,
                               makePad: { arrival in let pad = TimedPad(arrival: arrival); made.update { $0 = pad }; return pad })
    server.logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
    var clientConfiguration = PadForwarder.Configuration(host: "127.0.0.1")
    clientConfiguration.port = server.port
    let forwarder = PadForwarder(configuration: clientConfiguration, identity: clientIdentity,
                                 knownHosts: try KnownHostStore(url: state.appendingPathComponent("known_hosts")))
    forwarder.logger = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
    let pad = InjectedPad(), injector = pad.injector
    forwarder.add(pad)
    let stopped = LockedBox(false)
    let stop: @Sendable () -> Bool = { stopped.value }
    let figures = ForwarderFigures(forwarder)
    let serverThread = JoinableThread { server.run(tick: .milliseconds(250), until: stop) }
    let clientThread = JoinableThread { forwarder.run(until: stop) }

    var host: TimedPad?
    let deadline = MonotonicInstant.now + .seconds(10)
    while host == nil && MonotonicInstant.now < deadline { usleep(10_000); host = made.value }
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
    // Paced as a real pad sends (a DualSense's 250 reports a second), within the session's budget:
    // as fast as round trips allow, the host's budget and the snapshot re-sends were what it measured.
    let interval = Duration.microseconds(4_000)
    var next = MonotonicInstant.now
    for (report, expected) in prepared {
        while MonotonicInstant.now < next { usleep(UInt32(max(1, (next - MonotonicInstant.now) / .microseconds(1)))) }
        next = next + interval
        let sent = MonotonicInstant.now
        injector.inject(report)
        var arrivedAt: MonotonicInstant?
        while arrivedAt == nil, host.arrived.wait(timeout: .now() + .seconds(1)) == .success {
            if let last = host.lock.withLock({ host.last }), last.leftX == expected { arrivedAt = last.at }
        }
        if let arrivedAt { latencies.append(arrivedAt - sent) } else { lost += 1 }
    }
    let allocations = padgate_allocation_count() - allocationsBefore
    if traceAllocations { padgate_allocation_trace(0) }
    let allocationsPerReport = Double(allocations) / Double(prepared.count)
    guard !latencies.isEmpty, lost == 0 else { print("loopback_latency: \(latencies.count) reports arrived, \(lost) lost"); exit(1) }
    latencies.sort()
    func percentile(_ p: Double) -> Double { Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] / .nanoseconds(1)) / 1000 }
    print(String(format: "loopback_latency reports=%d p50_us=%.1f p99_us=%.1f max_us=%.1f lost=%d p99_ratio=%.2f (of 200 us)",
                 latencies.count, percentile(0.5), percentile(0.99), percentile(1.0), lost, percentile(0.99) / 200))
    // Everything both shipped loops did per report (forward: read, diff, encode, seal, send, poll;
    // serve: receive, open, decode, apply, its timers), keep-alives and pings included.
    print(String(format: "loopback_allocations allocations=%d reports=%d allocations_per_report=%.4f (target 0)", Int(allocations), prepared.count, allocationsPerReport))

    // Idle: the pad connected and untouched.
    usleep(1_000_000)  // let the fast re-sends after the last change finish
    let cpu0 = cpuSeconds(), sent0 = figures.sent, received0 = figures.received
    let window = 5.0
    usleep(UInt32(window * 1_000_000))
    let cpu = cpuSeconds() - cpu0
    print(String(format: "idle window_s=%.0f cpu_percent_both_ends=%.3f client_datagrams_per_s=%.1f host_datagrams_per_s=%.1f",
                 window, cpu / window * 100, Double(figures.sent - sent0) / window, Double(figures.received - received0) / window))

    stopped.update { $0 = true }
    serverThread.join()
    clientThread.join()
}

/// The forwarder's counters as its loop reports them (`onStatus`), for the benchmark's own thread
/// to read while the loop runs: a few relaxed atomic stores per pass.
final class ForwarderFigures: Sendable {
    private let sentCount = Atomic<Int>(0), receivedCount = Atomic<Int>(0), sessionID = Atomic<UInt32>(0)
    var sent: Int { sentCount.load(ordering: .relaxed) }
    var received: Int { receivedCount.load(ordering: .relaxed) }
    /// 0 until the host welcomed the client.
    var session: UInt32 { sessionID.load(ordering: .relaxed) }

    /// Set up before the forwarder's loop starts.
    init(_ forwarder: PadForwarder) {
        forwarder.onStatus = { [self] status in
            sentCount.store(status.sent, ordering: .relaxed)
            receivedCount.store(status.received, ordering: .relaxed)
            sessionID.store(status.session ?? 0, ordering: .relaxed)
        }
    }
}

// The continuous gyro calibration's cost: the same pipeline without the estimator (stored correction
// only, none stored), then with it, alternated so both see the same machine; medians of 3 runs each.
var costs: [GyroCalibrationMode: [(medianSent: Double, mean: Double)]] = [:]
for _ in 0..<3 {
    for mode in [GyroCalibrationMode.stored, .continuous] { costs[mode, default: []].append(try clientPipeline(gyroCalibration: mode)) }
}
func middle(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let (before, after) = (costs[.stored]!, costs[.continuous]!)
print(String(format: "gyro_calibration_cost median_sent_ns stored=%.1f continuous=%.1f ratio=%.3f mean_ns stored=%.1f continuous=%.1f ratio=%.3f",
             middle(before.map(\.medianSent)), middle(after.map(\.medianSent)), middle(after.map(\.medianSent)) / middle(before.map(\.medianSent)),
             middle(before.map(\.mean)), middle(after.map(\.mean)), middle(after.map(\.mean)) / middle(before.map(\.mean))))
try loopback()
