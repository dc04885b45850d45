// Where a report to the host's USB DualSense waits on its way to the evdev node, told by the
// kernel's own timestamps (ftrace on CLOCK_MONOTONIC, the clock the bench reads): the write
// completes usbhid's interrupt IN transfer through vhci-hcd's socket, vhci-hcd's receive thread
// (vhci_rx) wakes and gives the transfer back, usbhid's completion (hid_irq_in) hands the report
// to the HID core and evdev, and the reader wakes. usbhid then queues its next transfer, which
// vhci-hcd's send thread (vhci_tx) writes to padgate's serving thread (padgate-usbip): a report
// written before that arrives waits for it. Needs a writable tracefs (root in the test guest).
import Foundation
import Glibc
import MonotonicTime

enum KernelStages {
    static let root = "/sys/kernel/tracing"

    /// Why the kernel's timestamps cannot be had here, or nil.
    static func unavailableReason() -> String? {
        if access(root + "/trace", W_OK) != 0 {
            _ = root.withCString { mount("nodev", $0, "tracefs", 0, nil) }
        }
        return access(root + "/kprobe_events", W_OK) == 0 ? nil : "\(root) is not writable (tracefs as root)"
    }

    /// Writes `value` to a tracefs file; an empty value clears it (O_TRUNC, as `echo > file`), a
    /// line to `kprobe_events` adds a probe (no O_TRUNC, as `echo >> file`: tracefs cannot seek).
    static func write(_ value: String, to file: String) throws {
        let path = root + "/" + file
        let descriptor = open(path, O_WRONLY | (value.isEmpty ? O_TRUNC : 0))
        guard descriptor >= 0 else { throw KernelStagesError.cannotWrite("\(path): errno \(errno)") }
        defer { close(descriptor) }
        let line = Array((value + "\n").utf8)
        guard Glibc.write(descriptor, line, line.count) == line.count else { throw KernelStagesError.cannotWrite("\(path): errno \(errno) (\(value))") }
    }

    /// The threads a report passes through; the events that tell when each woke and ran.
    static let threads = ["vhci_rx", "vhci_tx", "padgate-usbip"]

    /// Tracing on: the scheduler's wake-ups and switches of those threads, and a probe at usbhid's
    /// completion (`hid_irq_in`; the HID core's entry is not probed: 6.12's usbhid reaches it by
    /// another name). The buffer holds `samples` of them.
    static func start(samples: Int) throws {
        try write("0", to: "tracing_on")
        try write("", to: "set_event")
        try write("", to: "kprobe_events")
        try write("mono", to: "trace_clock")
        try write(String(max(4096, samples * 4)), to: "buffer_size_kb")
        try write("p:padgate/usbhid_in hid_irq_in", to: "kprobe_events")
        let names = threads.map { "comm == \"\($0)\"" }.joined(separator: " || ")
        try write(names, to: "events/sched/sched_wakeup/filter")
        try write(threads.map { "next_comm == \"\($0)\"" }.joined(separator: " || "), to: "events/sched/sched_switch/filter")
        for event in ["sched/sched_wakeup", "sched/sched_switch", "padgate/usbhid_in"] {
            try write("1", to: "events/\(event)/enable")
        }
        try write("", to: "trace")
        try write("1", to: "tracing_on")
    }

    /// Tracing off; the events, oldest first.
    static func stop() throws -> [Event] {
        try write("0", to: "tracing_on")
        // tracefs files say they are empty (size 0): read to the end, not by the size.
        var bytes: [UInt8] = []
        let descriptor = open(root + "/trace", O_RDONLY)
        if descriptor >= 0 {
            defer { close(descriptor) }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = read(descriptor, &chunk, chunk.count)
                guard n > 0 else { break }
                bytes += chunk[..<n]
            }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        try write("", to: "set_event")
        try write("", to: "kprobe_events")
        return text.split(separator: "\n").compactMap(Event.init)
    }

    struct Event {
        enum Kind: Equatable { case woken(String), running(String), usbhidIn }
        let at: Int64   // ns, CLOCK_MONOTONIC
        let kind: Kind

        /// A line of the trace: `  comm-pid  [cpu] flags  SECONDS.MICROS: event: fields`.
        init?(_ line: Substring) {
            guard !line.hasPrefix("#"), let colon = line.range(of: ": ") else { return nil }
            let head = line[..<colon.lowerBound]
            guard let stamp = head.split(separator: " ").last, let dot = stamp.firstIndex(of: "."),
                  let seconds = Int64(stamp[..<dot]), let micros = Int64(stamp[stamp.index(after: dot)...]) else { return nil }
            at = seconds * 1_000_000_000 + micros * 1_000
            let rest = line[colon.upperBound...]
            func field(_ name: String) -> String? {
                rest.split(separator: " ").first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
            }
            if rest.hasPrefix("sched_wakeup:"), let comm = field("comm") { kind = .woken(comm) }
            else if rest.hasPrefix("sched_switch:"), let comm = field("next_comm") { kind = .running(comm) }
            else if rest.hasPrefix("usbhid_in:") { kind = .usbhidIn }
            else { return nil }
        }
    }

    static let stageNames = [
        "waited for usbhid's next transfer (vhci_tx → padgate-usbip)",
        "padgate's write → vhci_rx woken",
        "vhci_rx woken → running",
        "vhci_rx running → usbhid's completion",
        "usbhid's completion → the reader awake (the HID core, evdev, the reader's wake-up)",
    ]

    /// Each sample's stages in ns (as `stageNames`), from the sample's write to its arrival; nil
    /// for a sample whose events are not all in the trace (the buffer overran).
    static func stages(of spans: [(sent: MonotonicInstant, arrived: MonotonicInstant)], events: [Event]) -> [[Int64]?] {
        var cursor = 0
        return spans.map { span in
            let start = span.sent.nanoseconds, end = span.arrived.nanoseconds
            while cursor < events.count && events[cursor].at < start { cursor += 1 }
            var i = cursor
            func next(from t: Int64, _ match: (Event.Kind) -> Bool) -> Int64? {
                while i < events.count && events[i].at <= end {
                    defer { i += 1 }
                    if events[i].at >= t && match(events[i].kind) { return events[i].at }
                }
                return nil
            }
            // Did padgate's serving thread run in the window (usbhid's next transfer arriving)?
            // (It runs in a window either way: usbhid queues the next transfer as it completes this
            // one. Only a run before vhci_rx's wake means the report waited for it.)
            var ready = start
            if let served = next(from: start, { $0 == .running("padgate-usbip") }), next(from: served, { $0 == .woken("vhci_rx") }) != nil {
                ready = served
            }
            i = cursor
            guard let woken = next(from: ready, { $0 == .woken("vhci_rx") }),
                  let running = next(from: woken, { $0 == .running("vhci_rx") }),
                  let completed = next(from: running, { $0 == .usbhidIn }) else { return nil }
            return [ready - start, woken - ready, running - woken, completed - running, end - completed]
        }
    }
}

enum KernelStagesError: Error { case cannotWrite(String) }

/// A diagnostic, not a setting padgate makes: this process's threads and vhci-hcd's kernel
/// threads on one CPU, so a report's hand-over to vhci_rx never crosses to the other (emulated)
/// CPU. Root only (another process's affinity).
enum OneCPU {
    static func threads(named names: Set<String>) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { pid in
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            return comm.map(names.contains) ?? false
        }
    }

    static var ownThreads: [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap { pid_t($0) }
    }

    /// Every listed thread on `cpus` (bit i: CPU i), through taskset(1); the threads it could not move.
    @discardableResult
    static func set(_ threads: [pid_t], cpus: UInt64) -> [pid_t] {
        threads.filter { tid in
            let taskset = Process()
            taskset.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
            taskset.arguments = ["-p", String(cpus, radix: 16), String(tid)]
            taskset.standardOutput = FileHandle.nullDevice
            taskset.standardError = FileHandle.nullDevice
            guard (try? taskset.run()) != nil else { return true }
            taskset.waitUntilExit()
            return taskset.terminationStatus != 0
        }
    }

    static var all: UInt64 { let n = sysconf(Int32(_SC_NPROCESSORS_ONLN)); return n >= 64 ? .max : (1 << UInt64(n)) - 1 }
}
