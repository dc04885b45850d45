// End-to-end input latency against the kernel's own floor (`make bench-latency`,
// tools/bench-latency.sh). Needs /dev/uhid, /dev/uinput and hid-playstation: it runs in the test
// guest. In one boot, one sample at a time (the next report goes out 1 ms after the previous one
// arrived, so none coalesce), each sample a new left-stick value (a key for uinput) matched by
// value on the reading side:
//  1. floors, nothing of padgate in between: a uhid DualSense's write → its own evdev gamepad
//     event, on USB (the client's physical pad, the very device step 2 forwards) and on Bluetooth
//     (the bus the host's virtual pad uses); and a uinput key → its evdev event;
//  2. end to end through the shipped binaries: `padgate serve` and `padgate forward --pad` on
//     loopback, paired first; a report written to the physical pad → the value on the host's
//     virtual pad's evdev gamepad node;
//  3. ForwardBench's in-process loopback latency (the real client and host loops, no kernel
//     devices), run as a child process in the same boot;
// then padgate's added latency: end to end − (client floor + host floor), per percentile, and
// its p99 over the in-process p99 (target ≤ 2).
// Usage: LatencyBench RECORDING.hid [samples=10000]   (binaries are found next to this one)
import CMallocCounter
import Foundation
import Glibc
import HIDCodecs
import MonotonicTime
import PadDevices
import PadFamilies
import PadSystem

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { show("usage: LatencyBench RECORDING.hid [samples=10000]"); exit(2) }
let recording = arguments[1]
let samples = arguments.count >= 3 ? Int(arguments[2]) ?? 10_000 : 10_000
/// Samples taken and thrown away before each series: first-touch costs (page faults, caches).
let warmUp = 200
let pacing: useconds_t = 1_000
let sampleTimeout: Duration = .seconds(2)
let binaries = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("LatencyBench: \(message)\n".utf8))
    exit(1)
}

/// Polls `condition` until it holds or `timeout` passes (udev needs a moment to name new nodes).
func eventually<T>(timeout: Duration, _ condition: () -> T?) -> T? {
    let deadline = MonotonicInstant.now + timeout
    repeat {
        if let value = condition() { return value }
        usleep(20_000)
    } while MonotonicInstant.now < deadline
    return nil
}

struct Series {
    let name: String
    var latencies: [Duration] = []
    /// Each counted sample's write and arrival.
    var spans: [(sent: MonotonicInstant, arrived: MonotonicInstant)] = []
    var lost = 0

    /// Microseconds at quantile `q` (1: the maximum).
    func percentile(_ q: Double) -> Double {
        let sorted = latencies.sorted()
        guard !sorted.isEmpty else { return .nan }
        return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] / .nanoseconds(1)) / 1000
    }
    var p50: Double { percentile(0.5) }
    var p99: Double { percentile(0.99) }

    func printLine(_ what: String) {
        show(name + String(format: " samples=%d p50_us=%.1f p99_us=%.1f max_us=%.1f lost=%d", latencies.count, p50, p99, percentile(1), lost)
              + "  (\(what))")
    }
}

/// One evdev node, read the way padgate reads pads (libevdev); reports when a value arrives.
final class EvdevWatcher {
    let device: EvdevDevice
    private var poll = PollSet<Int>()

    init(path: String) throws {
        device = try EvdevDevice(path: path)
        poll.add(device.descriptor, 0)
    }

    func drain() throws { try device.readAvailable { _ in } }

    /// When poll(2) woke with the node readable and the batch read then held `code` = `value`;
    /// nil after `timeout`.
    func arrival(type: UInt32, code: UInt32, value: Int32, timeout: Duration) throws -> MonotonicInstant? {
        let deadline = MonotonicInstant.now + timeout
        while MonotonicInstant.now < deadline {
            var ready: Poll.Readiness?
            poll.wait(timeout: deadline - .now) { _, readiness in ready = readiness }
            let woke = MonotonicInstant.now
            guard let ready else { continue }
            if ready.hungUp { throw DeviceError.removed(path: device.path) }
            var matched = false
            try device.readAvailable { event in
                if UInt32(event.type) == type && UInt32(event.code) == code && event.value == value { matched = true }
            }
            if matched { return woke }
        }
        return nil
    }
}

/// `samples` changes (after `warmUp` uncounted ones): `change(i)` is the value the node must show
/// for change i and the write that makes it. The clock starts just before the write, on this
/// thread or on `writer`'s.
func measureChanges(_ name: String, on watcher: EvdevWatcher, type: UInt32, code: UInt32, count: Int = samples,
                    writtenBy writer: WriterThread? = nil,
                    change: (Int) -> (expected: Int32, write: () throws -> Void)) throws -> Series {
    var series = Series(name: name)
    series.latencies.reserveCapacity(count)
    for i in 0..<(warmUp + count) {
        usleep(pacing)
        try watcher.drain()
        let (expected, write) = change(i)
        var sent = MonotonicInstant.now
        if let writer { writer.start(write) } else { try write() }
        let arrived = try watcher.arrival(type: type, code: code, value: expected, timeout: sampleTimeout)
        if let writer { sent = try writer.finish() }
        guard i >= warmUp else { continue }
        if let arrived { series.latencies.append(arrived - sent); series.spans.append((sent, arrived)) } else { series.lost += 1 }
    }
    return series
}

/// The writer on a thread of its own, as in `serve` (its input thread writes the host's pad; a
/// game's thread reads it): the reading thread then has to be woken, as a game's is, for uhid as
/// for USB. In the floors above the bench writes and reads on one thread, and uhid delivers within
/// write(2), so the reader is never woken there.
final class WriterThread: @unchecked Sendable {
    private let go = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
    // Handed over through the semaphores only.
    private var job: (() throws -> Void)?
    private var sent = MonotonicInstant.now
    private var failure: (any Error)?

    init() {
        Thread { [self] in
            while true {
                go.wait()
                guard let job else { return }
                sent = .now
                do { try job() } catch { failure = error }
                done.signal()
            }
        }.start()
    }

    func start(_ job: @escaping () throws -> Void) { self.job = job; go.signal() }

    /// When the job's write began.
    func finish() throws -> MonotonicInstant {
        done.wait()
        if let failure { throw failure }
        return sent
    }

    func stop() { job = nil; go.signal() }
}

/// A uhid DualSense (hid-playstation bound, its evdev gamepad node known) whose left stick moves
/// to a new X with every report: a step coprime with 256 visits every value and never repeats the
/// last one, so no report is lost to the kernel's filtering of unchanged values.
final class SweptDualSense {
    let device: EmulatedPlayStationPad
    let pad: Pad
    let encoder: PlayStationInputEncoder
    private var state = GamepadState.dualSenseAtRest

    init(bus: PadBus, transport: VirtualPadTransport = .uhid, udev: Udev) throws {
        device = try EmulatedPlayStationPad(bus: bus, transport: transport)
        encoder = PlayStationInputEncoder(layout: bus == .usb ? PlayStationLayouts.dualSenseUSB() : PlayStationLayouts.dualSenseBluetooth())
        guard device.waitUntilOpened(),
              let pad = eventually(timeout: .seconds(10), { [device] in
                  udev.pads().first { $0.uniq == device.uniq && $0.gamepadNode != nil && $0.capabilities.contains(.battery) }
              }) else { fail("hid-playstation never bound the \(bus.shortName) DualSense (modprobe hid_playstation)") }
        self.pad = pad
    }

    var gamepadNode: String { pad.gamepadNode!.path }

    /// The next `count` reports and the X each shows, made before any clock starts.
    func reports(_ count: Int) -> [(report: [UInt8], x: Int32)] {
        (0..<count).map { _ in
            state.leftStick.x = (state.leftStick.x + 97) % 256
            state.sequence &+= 1
            return (encoder.encode(state), Int32(state.leftStick.x))
        }
    }

    /// Writes the reports one per sample; the host side or the pad's own node shows each X.
    func measure(_ name: String, on watcher: EvdevWatcher, count: Int = samples, writtenBy writer: WriterThread? = nil) throws -> Series {
        let reports = reports(warmUp + count)
        let device = device
        return try measureChanges(name, on: watcher, type: EvdevCode.EV_ABS, code: EvdevCode.ABS_X, count: count, writtenBy: writer) { i in
            (reports[i].x, { try device.send(reports[i].report) })
        }
    }
}

extension SweptDualSense {
    /// `measure`, each report written by another thread (`WriterThread`).
    func measureWrittenElsewhere(_ name: String, count: Int = samples) throws -> Series {
        let writer = WriterThread()
        defer { writer.stop() }
        return try measure(name, on: try EvdevWatcher(path: gamepadNode), count: count, writtenBy: writer)
    }
}

/// The floor: the pad's own evdev node, read in this process right after the write.
func uhidFloor(_ pad: SweptDualSense, name: String, count: Int = samples) throws -> Series {
    try pad.measure(name, on: try EvdevWatcher(path: pad.gamepadNode), count: count)
}

func uinputFloor() throws -> Series {
    let key = EvdevCode.BTN_SOUTH
    var layout = UInputGamepad.Layout.xbox360
    (layout.keys, layout.axes, layout.rumble) = ([key], [], false)
    let device = try UInputGamepad(identity: .generic, layout: layout)
    guard let node = eventually(timeout: .seconds(10), { device.devnode }) else { fail("uinput made no event node") }
    let watcher = try EvdevWatcher(path: node)
    return try measureChanges("floor_uinput", on: watcher, type: EvdevCode.EV_KEY, code: key) { i in
        let value: Int32 = i % 2 == 0 ? 1 : 0
        return (value, {
            try device.emit(type: EvdevCode.EV_KEY, code: key, value: value)
            try device.sync()
        })
    }
}

/// Prints one line at once: the guest's console is tailed, so each line shows as it comes.
func show(_ line: String) {
    print(line)
    fflush(nil)
}

/// A child process whose standard output and error are collected line by line.
final class Child: Sendable {
    let process = Process()
    private let pipe = Pipe()
    /// What came after the last newline, and the lines before it.
    private let collected = LockedBox((rest: Data(), lines: [String]()))

    init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.collected.update { collected in
                collected.rest.append(data)
                while let newline = collected.rest.firstIndex(of: 0x0a) {
                    collected.lines.append(String(decoding: collected.rest[..<newline], as: UTF8.self))
                    collected.rest.removeSubrange(...newline)
                }
            }
        }
        try process.run()
    }

    var output: [String] { collected.value.lines }

    func line(timeout: Duration, _ match: (String) -> Bool) -> String? {
        eventually(timeout: timeout) { output.first(where: match) }
    }

    /// Waits for the exit (SIGINT first if `interrupting`), then for the last of the output.
    func finish(interrupting: Bool = false) {
        if interrupting && process.isRunning { process.interrupt() }
        process.waitUntilExit()
        pipe.fileHandleForReading.readabilityHandler = nil
        let rest = pipe.fileHandleForReading.readDataToEndOfFile()
        collected.update { collected in
            collected.rest.append(rest)
            if !collected.rest.isEmpty { collected.lines += String(decoding: collected.rest, as: UTF8.self).split(separator: "\n").map(String.init) }
            collected.rest.removeAll()
        }
    }
}

/// The real binaries, as a person runs them: `serve --pair`, `pair --pin`, `forward --pad`.
func endToEnd(_ physical: SweptDualSense, udev: Udev) throws -> Series {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-latency-\(getpid())")
    defer { try? FileManager.default.removeItem(at: state) }
    setenv("PADGATE_STATE_DIR", state.path, 1)  // serve's and forward's identities, pairing, known hosts
    let padgate = binaries.appendingPathComponent("padgate")
    let port = String(47700 + Int.random(in: 0..<100))

    let serve = try Child(padgate, ["serve", "--pair", "--virtual", "dualsense", "--address", "127.0.0.1", "--port", port])
    defer { serve.finish(interrupting: true) }
    guard let line = serve.line(timeout: .seconds(20), { $0.contains("pairing PIN") }),
          let pin = line.split(separator: " ").first(where: { $0.count == 6 && $0.allSatisfy(\.isNumber) }) else {
        fail("serve printed no pairing PIN: \(serve.output)")
    }
    let pair = try Child(padgate, ["pair", "127.0.0.1:\(port)", "--pin", String(pin)])
    pair.finish()
    guard pair.process.terminationStatus == 0 else { fail("pairing failed: \(pair.output)") }
    let forward = try Child(padgate, ["forward", "127.0.0.1:\(port)", "--pad", physical.gamepadNode, "--quiet"])
    defer { forward.finish(interrupting: true) }

    guard let hostPad = eventually(timeout: .seconds(20), {
        udev.pads().first { $0.isHostVirtualPad && $0.gamepadNode != nil && $0.capabilities.contains(.battery) }
    }) else { fail("the host never made its virtual pad: serve \(serve.output), forward \(forward.output)") }
    let watcher = try EvdevWatcher(path: hostPad.gamepadNode!.path)
    usleep(500_000)  // the pad's first state and the fast re-sends that follow it
    return try physical.measure("end_to_end", on: watcher)
}

/// ForwardBench's loopback line, `loopback_latency ... p50_us=X p99_us=Y ...`, as (p50, p99).
func inProcessLoopback() throws -> (p50: Double, p99: Double) {
    let bench = try Child(binaries.appendingPathComponent("ForwardBench"), [recording, String(samples)])
    bench.finish()
    for line in bench.output { show("forward_bench: \(line)") }
    guard bench.process.terminationStatus == 0,
          let line = bench.output.first(where: { $0.hasPrefix("loopback_latency ") }) else { fail("ForwardBench failed") }
    func field(_ name: String) -> Double? {
        line.split(separator: " ").first { $0.hasPrefix("\(name)=") }.flatMap { Double($0.dropFirst(name.count + 1)) }
    }
    guard let p50 = field("p50_us"), let p99 = field("p99_us") else { fail("cannot read ForwardBench's line: \(line)") }
    return (p50, p99)
}

/// The host's DualSense as a USB device on vhci-hcd against the uhid one, in the same boot: a
/// report's time to the pad's evdev node, and the process's allocations per report in steady state
/// (each report completes one interrupt IN transfer usbhid queued).
func usbHostPad(uhidFloor: Series, udev: Udev) {
    if let reason = VHCI.unavailableReason() { print("floor_usbip_usb: not measured (\(reason))"); return }
    do {
        let usb = try SweptDualSense(bus: .usb, transport: .usb, udev: udev)
        defer { usb.device.stop() }
        let series = try usb.measure("floor_usbip_usb", on: try EvdevWatcher(path: usb.gamepadNode))
        series.printLine("host side: a report to the USB DualSense on vhci-hcd (USB/IP) -> its evdev node")
        print(String(format: "usbip_vs_uhid p50_ratio=%.2f p99_ratio=%.2f", series.p50 / uhidFloor.p50, series.p99 / uhidFloor.p99))
        // Like with like: both written by another thread than the reader's, as `serve` writes and
        // a game reads (the USB path's one more wake-up, vhci-hcd's receive thread, is its own).
        let bluetooth = try SweptDualSense(bus: EmulatedPlayStationPad.busPresentedToGames, udev: udev)
        let uhidElsewhere = try bluetooth.measureWrittenElsewhere("floor_uhid_bt_written_elsewhere")
        bluetooth.device.stop()
        uhidElsewhere.printLine("the uhid floor, the report written by another thread than the reader's")
        let usbElsewhere = try usb.measureWrittenElsewhere("floor_usbip_usb_written_elsewhere")
        usbElsewhere.printLine("the USB DualSense the same way")
        print(String(format: "usbip_vs_uhid_written_elsewhere p50_ratio=%.2f p99_ratio=%.2f",
                     usbElsewhere.p50 / uhidElsewhere.p50, usbElsewhere.p99 / uhidElsewhere.p99))
        usbStages(usb, udev: udev)
        for (name, pad) in [("usbip", usb)] {
            let reports = pad.reports(2000)
            for r in reports.prefix(1000) { try pad.device.send(r.report); usleep(500) }   // warm up
            let before = padgate_allocation_count()
            for r in reports.suffix(1000) { try pad.device.send(r.report); usleep(500) }
            let count = padgate_allocation_count() - before
            print(String(format: "%@_allocations_per_report=%.3f (1000 reports, steady state, whole process)", name, Double(count) / 1000))
        }
    } catch {
        print("floor_usbip_usb: failed (\(error))")
    }
}


/// The USB pad's series again with the kernel's timestamps on (`KernelStages`): each stage's p50
/// and p99, how many reports waited for usbhid's next transfer, and which stage was the largest
/// in the slowest 1 % of samples. Tracing costs time of its own: these samples are not the
/// series above.
func usbStages(_ usb: SweptDualSense, udev: Udev) {
    if let reason = KernelStages.unavailableReason() { print("usbip_stages: not measured (\(reason))"); return }
    do {
        let watcher = try EvdevWatcher(path: usb.gamepadNode)
        let count = min(samples, 3000)
        try KernelStages.start(samples: count)
        let series: Series
        do { series = try usb.measure("usbip_traced", on: watcher, count: count) } catch { _ = try? KernelStages.stop(); throw error }
        let events = try KernelStages.stop()
        let all = KernelStages.stages(of: series.spans, events: events)
        let staged = all.compactMap { $0 }
        series.printLine("the same, traced (\(staged.count) of \(all.count) samples with every event; \(events.count) events)")
        guard !staged.isEmpty else {
            // What the trace held around the first sample, to see which event is missing.
            if let first = series.spans.dropFirst(10).first {
                let near = events.filter { $0.at >= first.sent.nanoseconds - 1_000_000 && $0.at <= first.arrived.nanoseconds + 1_000_000 }
                print("usbip_stages: a sample from \(first.sent.nanoseconds) to \(first.arrived.nanoseconds) ns; the events near it: "
                      + near.prefix(20).map { "\($0.at):\($0.kind)" }.joined(separator: " ")
                      + "; the trace's first and last: \(events.first.map { "\($0.at)" } ?? "-") \(events.last.map { "\($0.at)" } ?? "-")")
            }
            return
        }
        func percentile(_ values: [Int64], _ q: Double) -> Double {
            let sorted = values.sorted()
            return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]) / 1000
        }
        let waited = staged.filter { $0[0] > 0 }.count
        print("usbip_stages: \(waited) of \(staged.count) reports waited for usbhid's next transfer")
        for (k, name) in KernelStages.stageNames.enumerated() {
            let values = staged.map { $0[k] }
            print(String(format: "usbip_stage %d p50_us=%.1f p99_us=%.1f max_us=%.1f  (%@)", k, percentile(values, 0.5), percentile(values, 0.99),
                         percentile(values, 1), name))
        }
        // The slowest 1 %: which stage took the most of each.
        let slowest = staged.sorted { $0.reduce(0, +) > $1.reduce(0, +) }.prefix(max(1, staged.count / 100))
        var largest = [Int](repeating: 0, count: KernelStages.stageNames.count)
        for sample in slowest { largest[sample.indices.max { sample[$0] < sample[$1] }!] += 1 }
        print("usbip_slowest_1pct: \(slowest.count) samples; the largest stage: "
              + largest.enumerated().filter { $0.element > 0 }.map { "stage \($0.offset) in \($0.element)" }.joined(separator: ", "))

        // The same without the hand-over between CPUs: this process and vhci-hcd's threads on
        // CPU 0 (a diagnostic; padgate pins nothing). The floor beside it, pinned the same way.
        let kernelThreads = OneCPU.threads(named: ["vhci_rx", "vhci_tx"])
        let pinned = kernelThreads + OneCPU.ownThreads
        let refused = OneCPU.set(pinned, cpus: 1)
        defer { OneCPU.set(pinned, cpus: OneCPU.all) }
        guard refused.isEmpty, !kernelThreads.isEmpty else { return print("usbip_pinned: not measured (\(kernelThreads.count) vhci threads, \(refused.count) refused)") }
        let onOne = try usb.measure("floor_usbip_usb_one_cpu", on: watcher, count: count)
        onOne.printLine("the USB pad with this process and vhci-hcd's threads on one CPU (a diagnostic)")
        let bluetooth = try SweptDualSense(bus: EmulatedPlayStationPad.busPresentedToGames, udev: udev)
        defer { bluetooth.device.stop() }
        OneCPU.set(OneCPU.ownThreads, cpus: 1)
        let uhidOnOne = try uhidFloor(bluetooth, name: "floor_uhid_bt_one_cpu", count: count)
        uhidOnOne.printLine("the uhid floor, the same way")
        print(String(format: "usbip_vs_uhid_one_cpu p50_ratio=%.2f p99_ratio=%.2f", onOne.p50 / uhidOnOne.p50, onOne.p99 / uhidOnOne.p99))
    } catch {
        print("usbip_stages: failed (\(error))")
    }
}

let udev = try Udev()
// The client's physical pad: its floor first, then the same device is forwarded.
let physical = try SweptDualSense(bus: .usb, udev: udev)
let clientFloor = try uhidFloor(physical, name: "floor_uhid_usb")
clientFloor.printLine("client side: uhid write on the physical pad -> its evdev node")
let hostLike = try SweptDualSense(bus: EmulatedPlayStationPad.busPresentedToGames, udev: udev)
let hostFloor = try uhidFloor(hostLike, name: "floor_uhid_bt")
hostLike.device.stop()
hostFloor.printLine("host side: uhid write on a Bluetooth DualSense like the host's -> its evdev node")
try uinputFloor().printLine("uinput key -> its evdev node, for scale")
usbHostPad(uhidFloor: hostFloor, udev: udev)
let endToEndSeries = try endToEnd(physical, udev: udev)
physical.device.stop()
endToEndSeries.printLine("physical pad's uhid write -> forward -> serve -> host virtual pad's evdev node")
let inProcess = try inProcessLoopback()

// The path crosses the kernel twice (the physical pad's uhid → evdev, which forward reads; the
// host's uhid write → evdev, which a game reads), so the floor is the sum of both sides.
// Percentiles do not add exactly: this subtracts each floor's own p50 (p99) from the end-to-end p50 (p99).
let floorP50 = clientFloor.p50 + hostFloor.p50, floorP99 = clientFloor.p99 + hostFloor.p99
let addedP50 = endToEndSeries.p50 - floorP50, addedP99 = endToEndSeries.p99 - floorP99
let ratio = addedP99 / inProcess.p99
show(String(format: "floor_sum p50_us=%.1f p99_us=%.1f  (floor_uhid_usb + floor_uhid_bt)", floorP50, floorP99))
show(String(format: "inproc_loopback p50_us=%.1f p99_us=%.1f  (ForwardBench, same boot)", inProcess.p50, inProcess.p99))
show(String(format: "padgate_added p50_us=%.1f p99_us=%.1f  (end_to_end - floor_sum) p99_ratio_to_inproc=%.2f (target <= 2: %@)",
             addedP50, addedP99, ratio, ratio <= 2 ? "met" : "MISSED"))
let lost = clientFloor.lost + hostFloor.lost + endToEndSeries.lost
exit(lost == 0 ? 0 : 1)
