import Foundation
import Glibc
import HIDCodecs
import Logging
import MonotonicTime
import PadSystem

/// What every emulated pad shares, over uhid or USB: the read pump's loop, whether the driver has
/// the pad open, and the output reports it has been sent, kept for `takeOutputs()` (and the device
/// tests' `waitForOutput`).
// Sendable: `running`, `isOpen` and `outputs` are behind `changed`; the rest is immutable or Sendable.
package final class UHIDPadChannel: @unchecked Sendable {
    package let uhid: any HIDDeviceEnd
    /// Guards `running`, `isOpen` and `outputs`; broadcast on open, close and every output report.
    private let changed = NSCondition()
    private var outputs: [[UInt8]] = []
    private var running = true
    private var isOpen = false
    /// Wakes the pump out of its poll when the pad is unplugged.
    private let stopPipe = WakePipe()
    /// Readable while output reports wait, so a poll(2) loop can wait for them; `takeOutputs()` drains it.
    private let outputPipe = WakePipe()
    package var outputReadyDescriptor: FileDescriptor { outputPipe.descriptor }

    package init(_ uhid: any HIDDeviceEnd) { self.uhid = uhid }

    /// A random MAC in the locally administered range, as the emulated pads' serial (uniq).
    package static func randomMAC() -> [UInt8] {
        var mac = (0..<6).map { _ in UInt8.random(in: 0...255) }
        mac[0] = (mac[0] & 0xfc) | 0x02
        return mac
    }

    /// A MAC as uniq carries it: `aa:bb:cc:dd:ee:ff`.
    package static func uniq(of mac: [UInt8]) -> String { Hex.encode(mac, separator: ":") }

    /// Starts `pump` on a thread of its own, then creates the device (a uhid device with this
    /// identity and descriptor; a USB device is plugged in when it is made); if the kernel refuses
    /// it, the thread is stopped again and the error thrown.
    @discardableResult
    package func start(_ threadName: String, pump: @escaping @Sendable () -> Void, creating identity: UHIDDevice.Identity, descriptor: [UInt8]) throws -> Thread {
        let thread = Thread(block: pump)
        thread.name = threadName
        thread.start()
        do {
            if let uhid = uhid as? UHIDDevice { try uhid.create(identity, descriptor: descriptor) }
        } catch {
            stop()
            throw error
        }
        return thread
    }

    deinit {
        stop()
        outputPipe.close()
        stopPipe.close()
    }

    /// Unplugs the pad (once).
    package func stop() {
        let wasRunning = changed.withLock { defer { running = false }; return running }
        guard wasRunning else { return }
        try? uhid.destroy()
        stopPipe.wake()
    }

    package var opened: Bool { changed.withLock { isOpen } }

    package func waitUntilOpened(timeout: Duration) -> Bool {
        let deadline = MonotonicInstant.now + timeout
        changed.lock(); defer { changed.unlock() }
        while !isOpen {
            if !changed.wait(until: deadline) { return isOpen }
        }
        return true
    }

    package func append(_ report: [UInt8]) {
        changed.withLock { outputs.append(report) }
        changed.broadcast()
        outputPipe.wake()
    }

    package func takeOutputs() -> [[UInt8]] {
        changed.withLock {
            defer { outputs.removeAll() }
            outputPipe.drain()
            return outputs
        }
    }

    /// Waits until an output report satisfying `match` arrives, returning it; nil on timeout.
    /// Reports that arrived before the call count too; those looked at are consumed, the rest stay.
    package func waitForOutput(timeout: Duration, where match: ([UInt8]) -> Bool) -> [UInt8]? {
        let deadline = MonotonicInstant.now + timeout
        changed.lock(); defer { changed.unlock() }
        while true {
            while !outputs.isEmpty {
                let report = outputs.removeFirst()
                if match(report) { return report }
            }
            if !changed.wait(until: deadline) { return nil }
        }
    }

    /// Answers a GET_REPORT with `data`; nil refuses it (EIO), as a pad refuses a report it lacks.
    package func replyGetReport(_ requestID: UInt32, with data: [UInt8]?) {
        if let data {
            try? uhid.replyGetReport(requestID: requestID, data: data, error: 0)
        } else {
            try? uhid.replyGetReport(requestID: requestID, data: [], error: UInt16(EIO))
        }
    }

    /// Sleeps in poll(2) until the kernel has something for the pad, `stop()` wakes it or `due()`
    /// comes (pads that report on a clock), calling `tick` on every wake-up. Open and close are
    /// recorded here; every event also goes to `handle`. Returns when the pad is unplugged or uhid fails.
    package func pump(due: () -> MonotonicInstant? = { nil }, tick: () -> Void = {}, handle: (UHIDEvent) -> Void) {
        while changed.withLock({ running }) {
            let due = due()
            let ready = Poll.wait([uhid.descriptor, stopPipe.descriptor], timeout: due.map { max(.zero, $0 - .now) })
            if ready[0].hungUp && !ready[0].readable { return }
            tick()
            guard ready[0].readable else { continue }
            do {
                while let event = try uhid.read() {
                    if event == .open || event == .close {
                        changed.withLock { isOpen = event == .open }
                        changed.broadcast()
                    }
                    // Every emulated pad takes every SET_REPORT (none of them keeps one).
                    if case .setReport(let id, _, _, _) = event { try? uhid.replySetReport(requestID: id, error: 0) }
                    handle(event)
                }
            } catch {
                Logger(label: "padgate.devices.uhid").error("uhid: \(error)")
                return
            }
        }
    }
}
