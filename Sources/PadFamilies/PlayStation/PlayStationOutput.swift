import PadDevices
import Feedback
import Foundation
import HIDCodecs

/// A DualSense or DualShock 4 driven through its hidraw node, with one cumulative output state: each
/// report flags only what changed (DualSense), so setting the lightbar never clobbers rumble or a
/// trigger effect that is already running. Also a rumble sink, for pads whose driver offers no FF.
public final class PlayStationOutput: RumbleSink {
    /// The pad's own kind: a DualSense Edge speaks the DualSense's reports.
    public let kind: PadKind
    public let bus: PadBus
    /// A Bluetooth DualSense plays its connection animation first and ignores the lightbar until it
    /// ends (SDL waits for it too).
    var playsStartupAnimation: Bool { kind.isDualSenseFamily && bus == .bluetooth }
    public private(set) var path: String
    private var device: HIDRawDevice
    private var dualSense = DualSenseOutputState()
    private var encoder = DualSenseOutputEncoder()
    private var dualShock4 = DualShock4OutputState()
    /// The DualSense keeps its motors at the last level it was sent; this renderer cadence keeps the
    /// re-sends (the "segments") short, and `silence()` runs on every exit path.
    public private(set) var reportsWritten = 0

    public init(pad: Pad, allowBluetoothFullReports: Bool = false) throws {
        guard let hidraw = pad.hidraw else {
            throw DeviceError.unsupported("\(pad.name) has no hidraw node: its lightbar, player LEDs and triggers cannot be set (is hidraw access allowed? see README, Permissions)")
        }
        guard pad.kind.isPlayStation else { throw DeviceError.unsupported("\(pad.kind.displayName) pads have no PlayStation output reports") }
        kind = pad.kind
        bus = pad.bus ?? .usb
        if bus == .bluetooth && !allowBluetoothFullReports && !Self.fullReportDrivers(kind).contains(Self.driver(ofHidraw: hidraw) ?? "") {
            // Without a driver that switches it, a Bluetooth pad still sends its short report 0x01;
            // our first output report would switch it to full reports for everyone reading it.
            throw DeviceError.unsupported("\(pad.name) is on Bluetooth without the hid-playstation driver: sending it output reports switches it to full reports (more radio traffic and battery, and other programs reading the short report see a different format). Pass --bt-full-reports to accept that")
        }
        path = hidraw
        device = try HIDRawDevice(path: hidraw)
    }

    /// The drivers that put a Bluetooth pad in full-report mode at probe: hid-playstation, and for
    /// a DualShock 4 on kernels before 6.2 hid-sony (its calibration read switches the pad).
    static func fullReportDrivers(_ kind: PadKind) -> Set<String> {
        kind == .dualShock4 ? ["playstation", "sony"] : ["playstation"]
    }

    /// The kernel driver bound to a hidraw node's HID device ("playstation", "hid-generic", ...).
    public static func driver(ofHidraw path: String) -> String? {
        let name = (path as NSString).lastPathComponent
        let link = "/sys/class/hidraw/\(name)/device/driver"
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: link)).map { ($0 as NSString).lastPathComponent }
    }

    /// Changes the cumulative DualSense state and sends only what changed (plus the motors when
    /// `resendRumble`, because a re-armed segment of an unchanged level is the keep-alive).
    public func updateDualSense(resendRumble: Bool = false, _ change: (inout DualSenseOutputState) -> Void) throws {
        guard kind.isDualSenseFamily else { throw DeviceError.unsupported("this needs a DualSense; a DualShock 4 has only rumble and the lightbar") }
        change(&dualSense)
        var report: [UInt8]
        // The encoder flags what changed since the last report; it keeps this one as sent only
        // once the write succeeded, so a failed write's changes are flagged again next time.
        var next = encoder
        do {
            report = try next.encode(dualSense, bus: bus)
            if resendRumble, let rumble = dualSense.rumble {
                // Take the rumble bytes from a rumble-only report, so the layout stays the encoder's.
                var only = DualSenseOutputState()
                only.rumble = rumble
                var scratch = DualSenseOutputEncoder()
                let usb = try scratch.encode(only, bus: .usb)
                let common = bus == .bluetooth ? 3 : 1
                report[common] |= usb[1]
                report[common + 2] = usb[3]; report[common + 3] = usb[4]
                if bus == .bluetooth { BluetoothCRC.stamp(seed: .output, report: &report) }
            }
        } catch { throw DeviceError.malformed("\(error)") }
        guard !DualSenseOutputEncoder.flagsNothing(report) else { encoder = next; return }
        try send(report)
        encoder = next
    }

    /// Sends a DualShock 4 report that flags only what `change` sets (so a lightbar change leaves the motors
    /// running), and keeps it in the cumulative state `reopen` re-sends.
    private func updateDualShock4(_ change: (inout DualShock4OutputState) -> Void) throws {
        var report = DualShock4OutputState()
        change(&report)
        change(&dualShock4)
        try send(report.encoded(bus: bus))
    }

    public func setLightbar(_ color: RGBColor) throws {
        if kind.isDualSenseFamily { try updateDualSense { $0.lightbar = color } } else { try updateDualShock4 { $0.lightbar = color } }
    }

    public func perform(_ action: RumbleAction) throws {
        let levels: MotorLevels
        switch action {
        case .play(let l, _): levels = l
        case .stop: levels = .silent
        }
        if kind.isDualSenseFamily { try updateDualSense(resendRumble: true) { $0.rumble = levels } } else { try updateDualShock4 { $0.rumble = levels } }
    }

    public func silence() { try? perform(.stop) }

    /// Opens the hidraw node again (after a write error) and re-sends the whole state.
    @discardableResult
    public func reopen() throws -> Bool {
        device = try HIDRawDevice(path: path)
        encoder = DualSenseOutputEncoder()
        if kind.isDualSenseFamily {
            let report: [UInt8]
            do { report = try encoder.encode(dualSense, bus: bus, changedOnly: false) } catch { throw DeviceError.malformed("\(error)") }
            if !DualSenseOutputEncoder.flagsNothing(report) { try send(report) }
        } else {
            try send(dualShock4.encoded(bus: bus))
        }
        return true
    }

    /// Reads one input report (for the start-up animation check); nil on timeout.
    public func readInput(timeout: Duration) throws -> [UInt8]? { try device.read(timeout: timeout) }

    private func send(_ report: [UInt8]) throws {
        try device.write(report)
        reportsWritten += 1
    }
}
