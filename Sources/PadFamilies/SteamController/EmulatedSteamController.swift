import Foundation
import HIDCodecs
import MonotonicTime
import PadDevices
import PadSystem

/// A Steam Controller (2026) made through /dev/uhid, wired (28de:1302) or as a puck's slot (1304,
/// with or without a controller on it): its HID interface with the
/// lizard mouse and keyboard beside the vendor reports, which hid-generic binds as it binds the
/// real one (a mouse and a keyboard node, and the hidraw node padgate and SDL read). Its state
/// report (0x42) goes every 4 ms with its IMU clock; every output report (rumble 0x80) and feature
/// report (settings in 1) a program sends is kept for `takeOutputs()`, its id first.
// Sendable: what the pump and the senders share is behind `state` or the channel's own lock.
public final class EmulatedSteamController: @unchecked Sendable {
    let uhid: UHIDDevice
    package let channel: UHIDPadChannel
    public let serial: String
    private let state = NSLock()
    private var controls = SteamControllerReports.Controls()
    private var sequence: UInt8 = 0
    private var lastSent = MonotonicInstant.now
    private let started = MonotonicInstant.now
    /// A puck's slot sends nothing while no controller is on it.
    private var connected: Bool
    public var outputReadyDescriptor: FileDescriptor { channel.outputReadyDescriptor }
    static let cadence = Duration.microseconds(4032)

    public init(phys: String = PadPhys.emulated, product: UInt16? = nil, connected: Bool = true, serial: String? = nil) throws {
        self.connected = connected
        self.serial = serial ?? "PADGATE" + String(UInt32.random(in: 0...UInt32.max), radix: 16, uppercase: true)
        uhid = try UHIDDevice()
        channel = UHIDPadChannel(uhid)
        let ids = PadKind.steamController.canonicalIDs!
        try channel.start("padgate-uhid-triton", pump: { [weak self] in self?.pump() },
                          creating: UHIDDevice.Identity(name: SteamControllerReports.name, phys: phys, uniq: self.serial, bus: .usb,
                                                        vendorID: ids.vendor, productID: product ?? ids.product, version: 0x0002),
                          descriptor: SteamControllerReports.descriptor)
    }

    public func stop() { channel.stop() }

    /// The controls from now on (sent at once, then every 4 ms, while a controller is on).
    /// Reports are written under `state`, so they reach the kernel in the order they were made.
    public func send(_ controls: SteamControllerReports.Controls) throws {
        try state.withLock {
            self.controls = controls
            if connected { try uhid.input(nextReport()) }
        }
    }

    /// A controller comes onto the slot or leaves it: the slot's wireless status report (0x79),
    /// then its state reports or none. `saying` false: it falls silent without a word, as a
    /// controller switched off may.
    public func setConnected(_ on: Bool, saying: Bool = true) throws {
        try state.withLock {
            connected = on
            if saying { try uhid.input([SteamControllerLayout.wirelessStatus, on ? SteamControllerLayout.connected : SteamControllerLayout.disconnected]) }
        }
    }

    private func nextReport() -> [UInt8] {
        sequence &+= 1
        lastSent = .now
        let since = (lastSent - started).components
        let micros = UInt32(truncatingIfNeeded: since.seconds * 1_000_000 + since.attoseconds / 1_000_000_000_000)
        return SteamControllerReports.state(controls, sequence: sequence, micros: micros)
    }

    public func takeOutputs() -> [[UInt8]] { channel.takeOutputs() }

    /// At input priority, as the other emulated pads'.
    private func pump() {
        ThreadPriority.raisedForInput {
            channel.pump(due: { state.withLock { connected ? lastSent + Self.cadence : .now + Self.cadence } }, tick: {
                state.withLock {
                    if connected && MonotonicInstant.now >= lastSent + Self.cadence { try? uhid.input(nextReport()) }
                }
            }, handle: handle)
        }
    }

    private func handle(_ event: UHIDEvent) {
        switch event {
        case .setReport(_, _, .feature, let data):
            channel.append(data)
        case .getReport(let id, let number, .feature):
            // A command's reply: its report, the command not echoed (nothing padgate sends reads one).
            channel.replyGetReport(id, with: [number] + [UInt8](repeating: 0, count: SteamControllerCommands.commandLength - 1))
        case .getReport(let id, _, _):
            channel.replyGetReport(id, with: nil)
        case .output(let report, _):
            channel.append(report)
        case .open, .close, .start, .stop, .setReport, .other: break  // the channel answers SET_REPORT
        }
    }
}

extension EmulatedSteamController: EmulatedPad {
    public var summary: String { "virtual Steam Controller (usb, serial \(serial))" }
    /// hid-generic opens it only when a program reads it: bound is enough here.
    public func waitUntilOpened(timeout: Duration) -> Bool { true }
}
