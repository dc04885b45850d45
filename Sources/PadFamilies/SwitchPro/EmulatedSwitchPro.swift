import PadDevices
import Foundation
import HIDCodecs
import MonotonicTime
import PadSystem

// The identity of a Switch Pro Controller over Bluetooth (057e:2009) as the kernel sees it: its
// report descriptor, a real pad's as registered by the Android CTS
// (tests/tests/hardware/res/raw/nintendo_switchpro_register.json, Apache-2.0; see NOTICE).
public enum SwitchProIdentityData {
    /// 170 bytes: inputs 0x21 (subcommand replies) and 0x30 (full report), 48 bytes after the id;
    /// 0x31-0x33 (NFC/IR, 361); 0x3F (the simple HID report); outputs 0x01 (rumble and
    /// subcommand), 0x10 (rumble), 0x11, 0x12, 48 bytes each.
    public static let bluetoothDescriptor: [UInt8] = [
        0x05, 0x01, 0x09, 0x05, 0xa1, 0x01, 0x06, 0x01, 0xff, 0x85, 0x21, 0x09, 0x21, 0x75, 0x08, 0x95,
        0x30, 0x81, 0x02, 0x85, 0x30, 0x09, 0x30, 0x75, 0x08, 0x95, 0x30, 0x81, 0x02, 0x85, 0x31, 0x09,
        0x31, 0x75, 0x08, 0x96, 0x69, 0x01, 0x81, 0x02, 0x85, 0x32, 0x09, 0x32, 0x75, 0x08, 0x96, 0x69,
        0x01, 0x81, 0x02, 0x85, 0x33, 0x09, 0x33, 0x75, 0x08, 0x96, 0x69, 0x01, 0x81, 0x02, 0x85, 0x3f,
        0x05, 0x09, 0x19, 0x01, 0x29, 0x10, 0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x10, 0x81, 0x02,
        0x05, 0x01, 0x09, 0x39, 0x15, 0x00, 0x25, 0x07, 0x75, 0x04, 0x95, 0x01, 0x81, 0x42, 0x05, 0x09,
        0x75, 0x04, 0x95, 0x01, 0x81, 0x01, 0x05, 0x01, 0x09, 0x30, 0x09, 0x31, 0x09, 0x33, 0x09, 0x34,
        0x16, 0x00, 0x00, 0x27, 0xff, 0xff, 0x00, 0x00, 0x75, 0x10, 0x95, 0x04, 0x81, 0x02, 0x06, 0x01,
        0xff, 0x85, 0x01, 0x09, 0x01, 0x75, 0x08, 0x95, 0x30, 0x91, 0x02, 0x85, 0x10, 0x09, 0x10, 0x75,
        0x08, 0x95, 0x30, 0x91, 0x02, 0x85, 0x11, 0x09, 0x11, 0x75, 0x08, 0x95, 0x30, 0x91, 0x02, 0x85,
        0x12, 0x09, 0x12, 0x75, 0x08, 0x95, 0x30, 0x91, 0x02, 0xc0,
    ]
    public static let name = "Pro Controller"
    /// hid-nintendo sets bit 15 on top (0x8001), a version SDL 2.26's mapping database knows for
    /// the pad under that driver; with 0 (0x8000) its evdev path took a mapping with every button
    /// moved (measured by the device test).
    public static let bluetoothVersion: UInt32 = 0x0001
}

/// A Switch Pro Controller over Bluetooth made through /dev/uhid: it answers hid-nintendo's and
/// SDL's handshake as the pad does (USB commands, device info, SPI flash reads from its own
/// calibration blocks, report mode, IMU and vibration enable, player and home lights) and then
/// reports every 15 ms (report 0x30 with three IMU samples), as a real pad does whether or not
/// anything changed. Every output report is kept for `takeOutputs()`.
// Sendable: what the pump and the senders share is behind `state` or the channel's own lock.
public final class EmulatedSwitchPro: @unchecked Sendable {
    let uhid: UHIDDevice
    /// Package-visible for the device tests' `waitForOutput`.
    package let channel: UHIDPadChannel
    public let calibration: SwitchProCalibration
    public let macAddress: [UInt8]
    public var uniq: String { UHIDPadChannel.uniq(of: macAddress) }
    /// Guards `controls`, `imu`, `lastSent` and `streaming`: the pump reports on its own clock.
    private let state = NSLock()
    private var controls = SwitchProReports.Controls()
    private var imu = SwitchProReports.IMUSample()
    private var lastSent = MonotonicInstant.now
    /// Whether the host asked for full reports (subcommand 0x03, 0x30): until then the pad only answers.
    private var streaming = false
    public var outputReadyDescriptor: FileDescriptor { channel.outputReadyDescriptor }

    /// - Parameter macAddress: what the pad says its address is (nil: a random one, as each
    ///   emulated pad gets).
    public init(calibration: SwitchProCalibration = .defaults, name: String? = nil, phys: String = PadPhys.emulated, macAddress: [UInt8]? = nil) throws {
        self.calibration = calibration
        self.macAddress = macAddress ?? UHIDPadChannel.randomMAC()
        let c = calibration.sticks
        controls.left = (UInt16(clamping: c.leftX.center), UInt16(clamping: c.leftY.center))
        controls.right = (UInt16(clamping: c.rightX.center), UInt16(clamping: c.rightY.center))
        uhid = try UHIDDevice()
        channel = UHIDPadChannel(uhid)
        let ids = PadKind.switchPro.canonicalIDs!
        try channel.start("padgate-uhid-switch", pump: { [weak self] in self?.pump() },
                          creating: UHIDDevice.Identity(name: name ?? SwitchProIdentityData.name, phys: phys, uniq: uniq, bus: .bluetooth,
                                                        vendorID: ids.vendor, productID: ids.product, version: SwitchProIdentityData.bluetoothVersion),
                          descriptor: SwitchProIdentityData.bluetoothDescriptor)
    }

    public func stop() { channel.stop() }

    public var opened: Bool { channel.opened }

    /// Waits for the driver to open the pad (hid-nintendo opens it before its handshake).
    public func waitUntilOpened(timeout: Duration) -> Bool { channel.waitUntilOpened(timeout: timeout) }

    /// Sets what the pad reports and sends it at once (and from then on every 15 ms).
    public func send(_ controls: SwitchProReports.Controls, imu: SwitchProReports.IMUSample? = nil) throws {
        let report: [UInt8] = state.withLock {
            self.controls = controls
            if let imu { self.imu = imu }
            return nextFullReport()
        }
        try uhid.input(report)
    }

    /// Caller holds `state`.
    private func nextFullReport() -> [UInt8] {
        controls.timer &+= 1
        lastSent = .now
        return SwitchProReports.fullReport(controls, imu: imu)
    }

    public func takeOutputs() -> [[UInt8]] { channel.takeOutputs() }

    /// Streams a full report every `SwitchProDriver.cadence` once the host asked for them, at input
    /// priority: from 6.2 on, hid-nintendo sends each rumble frame and subcommand only once the
    /// pad's reports come 8-17 ms apart (joycon_enforce_subcmd_rate, up to 500 tries), so a pad
    /// whose clock slips on a busy machine holds a game's rumble, and its stop, for seconds.
    private func pump() {
        ThreadPriority.raisedForInput { pumpAtItsPace() }
    }

    private func pumpAtItsPace() {
        channel.pump(due: { state.withLock { streaming ? lastSent + SwitchProDriver.cadence : nil } }, tick: {
            if let report: [UInt8] = state.withLock({ streaming && MonotonicInstant.now >= lastSent + SwitchProDriver.cadence ? nextFullReport() : nil }) {
                try? uhid.input(report)
            }
        }, handle: handle)
    }

    private func handle(_ event: UHIDEvent) {
        switch event {
        case .getReport(let id, _, _):
            channel.replyGetReport(id, with: nil)
        case .output(let report, _):
            if let reply = answer(report) { try? uhid.input(reply) }
            channel.append(report)
        case .open, .close, .start, .stop, .setReport, .other: break  // the channel answers SET_REPORT
        }
    }

    /// The pad's answer to an output report, if it gives one.
    func answer(_ report: [UInt8]) -> [UInt8]? {
        if report.count >= 2, report[0] == SwitchProReports.usbCommandOutputID {
            return [SwitchProReports.usbReplyID, report[1]] + [UInt8](repeating: 0, count: SwitchProReports.length - 2)
        }
        guard let output = SwitchProReports.output(report), let id = output.subcommand else { return nil }
        let controls = state.withLock { self.controls }
        var ack: UInt8 = 0x80, data: [UInt8] = []
        switch SwitchProReports.Subcommand(rawValue: id) {
        case .deviceInfo:
            ack = 0x82; data = SwitchProReports.deviceInfo(mac: macAddress)
        case .spiRead:
            guard output.arguments.count >= 5 else { return nil }
            let address = output.arguments[0..<4].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
            guard let bytes = calibration.spiRead(address: address, length: Int(output.arguments[4])) else { return nil }
            ack = 0x90; data = Array(output.arguments[0..<5]) + bytes
        case .setReportMode:
            state.withLock { streaming = output.arguments.first == SwitchProReports.fullReportID }
        default: break
        }
        return SwitchProReports.subcommandReply(controls, ack: ack, subcommand: id, data: data)
    }
}

extension EmulatedSwitchPro: EmulatedPad {
    public var summary: String { "virtual Switch Pro (bt, \(uniq))" }
}
