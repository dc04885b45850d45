import Foundation
import HIDCodecs
import MonotonicTime
import PadDevices
import PadSystem

/// A Steam Deck's controller interface made through /dev/uhid (USB bus, 28de:1205, the real
/// interface's descriptor): hid-steam binds it from 6.3 on (before, hid-generic), and it answers
/// the commands hid-steam and SDL send as the Deck does: the serial for the string attribute
/// (0xAE), the command echoed for the rest; its state report goes every 4 ms, as the Deck's.
/// Every command a program sends (rumble, settings) is kept for `takeOutputs()`, with its
/// report number 0 first, as hidraw carries it.
// Sendable: what the pump and the senders share is behind `state` or the channel's own lock.
public final class EmulatedSteamDeck: @unchecked Sendable {
    let uhid: UHIDDevice
    package let channel: UHIDPadChannel
    public let serial: String
    private let state = NSLock()
    private var controls = SteamDeckReports.Controls()
    private var sequence: UInt32 = 0
    private var lastSent = MonotonicInstant.now
    private var lastCommand: [UInt8] = []
    /// No state report goes while set (`switchToGamepadMode`).
    private var quiet = false
    public var outputReadyDescriptor: FileDescriptor { channel.outputReadyDescriptor }
    static let cadence = Duration.microseconds(Int64(SteamDeckLayout.reportMicros))

    public init(phys: String = PadPhys.emulated, serial: String? = nil) throws {
        // A Deck's serial: letters and digits, at most 21 (hid-steam's buffer).
        self.serial = serial ?? "PADGATE" + String(UInt32.random(in: 0...UInt32.max), radix: 16, uppercase: true)
        uhid = try UHIDDevice()
        channel = UHIDPadChannel(uhid)
        let ids = PadKind.steamDeck.canonicalIDs!
        try channel.start("padgate-uhid-deck", pump: { [weak self] in self?.pump() },
                          creating: UHIDDevice.Identity(name: SteamDeckReports.name, phys: phys, uniq: self.serial, bus: .usb,
                                                        vendorID: ids.vendor, productID: ids.product, version: 0x0110),
                          descriptor: SteamDeckReports.descriptor)
    }

    public func stop() { channel.stop() }
    public var opened: Bool { channel.opened }

    /// The controls from now on (sent at once, then every 4 ms).
    /// Reports are written under `state`, so they reach the kernel in the order they were made.
    public func send(_ controls: SteamDeckReports.Controls) throws {
        try state.withLock {
            self.controls = controls
            try uhid.input(nextReport())
        }
    }

    private func nextReport() -> [UInt8] {
        sequence &+= 1
        lastSent = .now
        return SteamDeckReports.state(controls, sequence: sequence)
    }

    public func takeOutputs() -> [[UInt8]] { channel.takeOutputs() }

    /// hid-steam (with its default lizard_mode) reports nothing on a Deck's evdev nodes until the
    /// Deck is in its gamepad mode, which holding ≡ for 450 ms switches once hid-steam has
    /// registered it and while no program holds the hidraw node; it answers the switch with
    /// commands to the Deck (lizard mode off, and from some version a haptic pulse on each pad).
    /// ≡ is held in one report with no report after it until such a command, so the evdev node
    /// never reports ≡ pressed. The input device shows in sysfs a moment before hid-steam reads
    /// reports for it, and a hold that lands first is ignored: an unanswered hold is released and
    /// held again. False: no answer to any of `attempts` holds (a kernel without the switch).
    public func switchToGamepadMode(attempts: Int = 3, timeout: Duration = .seconds(2)) throws -> Bool {
        for _ in 0..<attempts where try holdOptions(timeout: timeout) { return true }
        return false
    }

    private func holdOptions(timeout: Duration) throws -> Bool {
        var held = state.withLock { controls }
        held.buttons.insert(.options)
        func answered(within wait: Duration) -> Bool {
            channel.waitForOutput(timeout: wait) { $0.count > 1 && SteamDeckCommands.answersASwitchToGamepadMode.contains($0[1]) } != nil
        }
        _ = channel.takeOutputs()   // what hid-steam sent before the hold is not the answer
        do {
            try state.withLock {
                quiet = true
                sequence &+= 1
                lastSent = .now
                try uhid.input(SteamDeckReports.state(held, sequence: sequence))
            }
        } catch { release(); throw error }
        let switched = answered(within: timeout)
        release()
        // A release cancels a switch not yet begun; one already running still answers.
        guard switched || answered(within: .seconds(1)) else { return false }
        // The rest of the answer (settings, the pads' pulses) is hid-steam's to the Deck, not a
        // game's: none of it reaches the pad in the person's hands.
        let end = MonotonicInstant.now + .seconds(2)
        while MonotonicInstant.now < end, channel.waitForOutput(timeout: .milliseconds(300), where: { _ in true }) != nil {}
        return true
    }

    /// ≡ let go: the current controls, and the 4 ms cadence again.
    private func release() {
        state.withLock {
            quiet = false
            try? uhid.input(nextReport())
        }
    }

    /// At input priority, as the other emulated pads'.
    private func pump() {
        ThreadPriority.raisedForInput {
            channel.pump(due: { state.withLock { quiet ? .now + Self.cadence : lastSent + Self.cadence } }, tick: {
                // Written under `state`: a report made before a hold cannot land after it.
                state.withLock {
                    if !quiet && MonotonicInstant.now >= lastSent + Self.cadence { try? uhid.input(nextReport()) }
                }
            }, handle: handle)
        }
    }

    private func handle(_ event: UHIDEvent) {
        switch event {
        case .setReport(_, _, .feature, let data):
            // data[0] is the report number (0): the command follows.
            let command = Array(data.dropFirst())
            state.withLock { lastCommand = command }
            channel.append(data)
        case .getReport(let id, _, .feature):
            let command = state.withLock { lastCommand }
            channel.replyGetReport(id, with: SteamDeckReports.reply(to: command, serial: serial))
        case .getReport(let id, _, _):
            channel.replyGetReport(id, with: nil)
        case .output(let report, _):
            channel.append(report)
        case .open, .close, .start, .stop, .setReport, .other: break  // the channel answers SET_REPORT
        }
    }
}

extension EmulatedSteamDeck: EmulatedPad {
    public var summary: String { "virtual Steam Deck controls (usb, serial \(serial))" }
    /// hid-steam opens the Deck at probe; hid-generic (before 6.3) not until a program reads its
    /// hidraw node: bound is enough here.
    public func waitUntilOpened(timeout: Duration) -> Bool { true }
}
