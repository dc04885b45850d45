import Foundation
import Glibc
import HIDCodecs
import Logging
import PadSystem

// The identity of an Xbox One S over Bluetooth (045e:02fd) as the kernel sees it: its report
// descriptor, a real pad's as registered by the Android CTS
// (tests/tests/hardware/res/raw/microsoft_xboxones_register.json, Apache-2.0; see NOTICE).
public enum XboxOneSIdentityData {
    /// 334 bytes: input 0x01 (17 bytes: sticks, triggers, hat, 15 buttons, AC Back), input 0x02
    /// (AC Home, the first firmware's Xbox button), output 0x03 (rumble: actuator enables, four
    /// magnitudes, duration, delay, loop count), input 0x04 (battery strength).
    public static let bluetoothDescriptor: [UInt8] = [
        0x05, 0x01, 0x09, 0x05, 0xa1, 0x01, 0x85, 0x01, 0x09, 0x01, 0xa1, 0x00, 0x09, 0x30, 0x09, 0x31,
        0x15, 0x00, 0x27, 0xff, 0xff, 0x00, 0x00, 0x95, 0x02, 0x75, 0x10, 0x81, 0x02, 0xc0, 0x09, 0x01,
        0xa1, 0x00, 0x09, 0x32, 0x09, 0x35, 0x15, 0x00, 0x27, 0xff, 0xff, 0x00, 0x00, 0x95, 0x02, 0x75,
        0x10, 0x81, 0x02, 0xc0, 0x05, 0x02, 0x09, 0xc5, 0x15, 0x00, 0x26, 0xff, 0x03, 0x95, 0x01, 0x75,
        0x0a, 0x81, 0x02, 0x15, 0x00, 0x25, 0x00, 0x75, 0x06, 0x95, 0x01, 0x81, 0x03, 0x05, 0x02, 0x09,
        0xc4, 0x15, 0x00, 0x26, 0xff, 0x03, 0x95, 0x01, 0x75, 0x0a, 0x81, 0x02, 0x15, 0x00, 0x25, 0x00,
        0x75, 0x06, 0x95, 0x01, 0x81, 0x03, 0x05, 0x01, 0x09, 0x39, 0x15, 0x01, 0x25, 0x08, 0x35, 0x00,
        0x46, 0x3b, 0x01, 0x66, 0x14, 0x00, 0x75, 0x04, 0x95, 0x01, 0x81, 0x42, 0x75, 0x04, 0x95, 0x01,
        0x15, 0x00, 0x25, 0x00, 0x35, 0x00, 0x45, 0x00, 0x65, 0x00, 0x81, 0x03, 0x05, 0x09, 0x19, 0x01,
        0x29, 0x0f, 0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x0f, 0x81, 0x02, 0x15, 0x00, 0x25, 0x00,
        0x75, 0x01, 0x95, 0x01, 0x81, 0x03, 0x05, 0x0c, 0x0a, 0x24, 0x02, 0x15, 0x00, 0x25, 0x01, 0x95,
        0x01, 0x75, 0x01, 0x81, 0x02, 0x15, 0x00, 0x25, 0x00, 0x75, 0x07, 0x95, 0x01, 0x81, 0x03, 0x05,
        0x0c, 0x09, 0x01, 0x85, 0x02, 0xa1, 0x01, 0x05, 0x0c, 0x0a, 0x23, 0x02, 0x15, 0x00, 0x25, 0x01,
        0x95, 0x01, 0x75, 0x01, 0x81, 0x02, 0x15, 0x00, 0x25, 0x00, 0x75, 0x07, 0x95, 0x01, 0x81, 0x03,
        0xc0, 0x05, 0x0f, 0x09, 0x21, 0x85, 0x03, 0xa1, 0x02, 0x09, 0x97, 0x15, 0x00, 0x25, 0x01, 0x75,
        0x04, 0x95, 0x01, 0x91, 0x02, 0x15, 0x00, 0x25, 0x00, 0x75, 0x04, 0x95, 0x01, 0x91, 0x03, 0x09,
        0x70, 0x15, 0x00, 0x25, 0x64, 0x75, 0x08, 0x95, 0x04, 0x91, 0x02, 0x09, 0x50, 0x66, 0x01, 0x10,
        0x55, 0x0e, 0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x01, 0x91, 0x02, 0x09, 0xa7, 0x15,
        0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x01, 0x91, 0x02, 0x65, 0x00, 0x55, 0x00, 0x09, 0x7c,
        0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x01, 0x91, 0x02, 0xc0, 0x05, 0x06, 0x09, 0x20,
        0x85, 0x04, 0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x01, 0x81, 0x02, 0xc0,
    ]
    public static let name = "Xbox Wireless Controller"
    public static let productID: UInt16 = 0x02fd
    /// The Xbox pads hid-microsoft drives over Bluetooth (its MS_QUIRK_FF table in 6.1): a
    /// forwarded one keeps its product id on the host; any other is shown as the One S.
    public static let bluetoothProductIDs: Set<UInt16> = [0x02e0, 0x02fd, 0x0b05, 0x0b13, 0x0b20, 0x0b22]
}

/// An Xbox One S over Bluetooth made through /dev/uhid: hid-microsoft binds it (gamepad node,
/// force feedback through report 0x03, battery), SDL's HIDAPI Xbox One driver opens its hidraw
/// node. A pump thread answers the kernel's GET_REPORTs (the battery, which hid-input reads when
/// udev looks at the power supply; unanswered each would hold udevd for uhid's 5 s) and collects
/// every output report.
public final class EmulatedXboxOne {
    let uhid: UHIDDevice
    public let productID: UInt16
    public let uniq: String
    private let changed = NSCondition()
    private var outputs: [[UInt8]] = []
    private var running = true
    private var isOpen = false
    private var battery: [UInt8] = XboxOneSBluetooth.batteryReport(percent: 100)
    private let stopPipe = WakePipe()
    private let outputPipe = WakePipe()
    /// Readable whenever output reports wait in `takeOutputs()`.
    public var outputReadyDescriptor: FileDescriptor { outputPipe.descriptor }

    public init(productID: UInt16 = XboxOneSIdentityData.productID, name: String? = nil, phys: String = PadPhys.emulated,
                uniq: String? = nil) throws {
        self.productID = productID
        // hid-microsoft tells pads apart by nothing; udev and padgate by uniq, a MAC on real pads.
        var mac = (0..<6).map { _ in UInt8.random(in: 0...255) }
        mac[0] = (mac[0] & 0xfc) | 0x02
        self.uniq = uniq ?? mac.map { String(format: "%02x", $0) }.joined(separator: ":")
        uhid = try UHIDDevice()
        let thread = Thread { [weak self] in self?.pump() }
        thread.name = "padgate-uhid-xbox"
        thread.start()
        do {
            try uhid.create(UHIDDevice.Identity(name: name ?? XboxOneSIdentityData.name, phys: phys, uniq: self.uniq, bus: .bluetooth,
                                                vendorID: 0x045e, productID: productID),
                            descriptor: XboxOneSIdentityData.bluetoothDescriptor)
        } catch {
            stop()
            throw error
        }
    }

    deinit {
        stop()
        outputPipe.close()
        stopPipe.close()
    }

    /// Unplugs the pad.
    public func stop() {
        let wasRunning = changed.withLock { defer { running = false }; return running }
        guard wasRunning else { return }
        try? uhid.destroy()
        stopPipe.wake()
    }

    /// Feeds one input report.
    public func send(_ report: [UInt8]) throws {
        if report.first == XboxOneSBluetooth.batteryReportID { changed.withLock { battery = report } }
        try uhid.input(report)
    }

    public var opened: Bool { changed.withLock { isOpen } }

    /// Every output report received so far (and clears the list).
    public func takeOutputs() -> [[UInt8]] {
        changed.withLock {
            defer { outputs.removeAll() }
            outputPipe.drain()
            return outputs
        }
    }

    /// Waits until an output report satisfying `match` arrives; those looked at are consumed.
    public func waitForOutput(timeout: Duration, where match: ([UInt8]) -> Bool) -> [UInt8]? {
        let deadline = Date().addingTimeInterval(timeout.seconds)
        changed.lock(); defer { changed.unlock() }
        while true {
            while !outputs.isEmpty {
                let report = outputs.removeFirst()
                if match(report) { return report }
            }
            if !changed.wait(until: deadline) { return nil }
        }
    }

    private func pump() {
        while changed.withLock({ running }) {
            let ready = Poll.wait([uhid.descriptor, stopPipe.descriptor], timeout: nil)
            if ready[0].hungUp && !ready[0].readable { return }
            guard ready[0].readable else { continue }
            do {
                while let event = try uhid.read() { handle(event) }
            } catch {
                Logger(label: "padgate.devices.uhid").error("uhid: \(error)")
                return
            }
        }
    }

    private func handle(_ event: UHIDEvent) {
        switch event {
        case .open, .close:
            changed.withLock { isOpen = event == .open }
            changed.broadcast()
        case .getReport(let id, let number, _):
            let battery = changed.withLock { self.battery }
            if number == XboxOneSBluetooth.batteryReportID {
                try? uhid.replyGetReport(requestID: id, data: battery)
            } else {
                try? uhid.replyGetReport(requestID: id, data: [], error: UInt16(EIO))
            }
        case .setReport(let id, _, _, _):
            try? uhid.replySetReport(requestID: id)
        case .output(let report, _):
            changed.withLock { outputs.append(report) }
            changed.broadcast()
            outputPipe.wake()
        case .start, .stop, .other: break
        }
    }
}
