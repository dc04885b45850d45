import Foundation
import HIDCodecs
import Logging
import PadDevices
import PadSystem
import WireProtocol

/// A forwarded Steam Deck shown to games as a Deck's controller interface through uhid (USB bus,
/// 28de:1205, the real interface's descriptor and replies: `EmulatedSteamDeck`): hid-steam binds
/// it from 6.3 on (gamepad and IMU nodes, rumble), SDL's HIDAPI Steam Deck driver opens it, and
/// before 6.3 hid-generic gives programs its hidraw node. The wire's values go back into the
/// Deck's own report (the inverse of `SteamDeckInputCodec`); the rumble command a game sends
/// comes back as a lease.
public final class SteamDeckVirtualPad: VirtualPad {
    public let arrival: PadArrival
    let device: EmulatedSteamDeck
    var controls = SteamDeckReports.Controls()
    var lastLevels = MotorLevels.silent
    var sequence = WireSequence(0)

    public init(arrival: PadArrival) throws {
        // hid-generic would bind it before 6.3, leaving games only its hidraw node (which SDL 2.26
        // does not open as a Deck): the host's Xbox 360 pad serves them better there.
        let ids = PadKind.steamDeck.canonicalIDs!
        guard KernelDrivers.hidModule(bus: PadBus.usb.kernelBus, vendor: ids.vendor, product: ids.product) == "hid_steam" else {
            throw DeviceError.unsupported("this kernel's hid-steam does not drive the Steam Deck (it does from Linux 6.3)")
        }
        self.arrival = arrival
        device = try EmulatedSteamDeck(phys: PadPhys.hostVirtual, serial: Self.serial(for: arrival))
        // hid-steam opens the Deck at probe: opened is bound.
        guard device.channel.waitUntilOpened(timeout: .seconds(10)) else {
            device.stop()
            throw DeviceError.unsupported("hid-steam did not bind the virtual Steam Deck: sudo modprobe hid-steam")
        }
        // Games that read its evdev node see it only in its gamepad mode (Steam and SDL's HIDAPI
        // driver read the hidraw node in either), which hid-steam switches once it has registered
        // the Deck's input device (named from the serial it read at probe).
        let registered = KernelDrivers.waitUntil(timeout: .seconds(10)) { KernelDrivers.hasInputDevice(named: "Steam Deck", uniq: device.serial) }
        // Games open the hidraw node of hid-steam's client, which it adds last in its probe, after
        // the input devices: the Deck is the games' once that node is there.
        let clientReady = registered && KernelDrivers.waitUntil(timeout: Self.clientWait) {
            HidSteamClients.ready(bus: PadBus.usb.kernelBus, vendor: ids.vendor, product: ids.product)
        }
        if registered && !clientReady {
            Self.log.notice("slot \(arrival.slot.rawValue): hid-steam has not given the host's Steam Deck the hidraw node games open within \(Self.clientWait)")
        }
        let switched: Bool
        do { switched = try registered && device.switchToGamepadMode() } catch {
            // Its pump holds it: a Deck not stopped here would stay on the host.
            device.stop()
            throw error
        }
        if !switched {
            Self.log.notice("slot \(arrival.slot.rawValue): hid-steam did not switch the host's Steam Deck to its gamepad mode; games reading its evdev node see it once ≡ is held")
        }
    }
    private static let log = Logger(label: "padgate.host")
    /// How long the host waits for hid-steam's client node before it says so and goes on.
    static let clientWait: Duration = .seconds(5)

    /// A serial of the Deck's shape (letters and digits, at most 21) that is the same for the same
    /// physical pad each time it arrives, so a game's per-pad settings find it again.
    static func serial(for arrival: PadArrival, kind: PadKind = .steamDeck) -> String? {
        guard let mac = HostPadAddress.stable(for: arrival, kind: kind) else { return nil }
        return "PADGATE" + mac.map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined()
    }

    /// The wire's state in the Deck's terms: its buttons only, sticks with +y up, triggers 0...32767.
    static func update(_ c: inout SteamDeckReports.Controls, with s: PadStateSnapshot) {
        c.buttons = GamepadButtons(rawValue: s.buttons).intersection(PadKind.steamDeck.buttons)
        c.dpad = DPad(hat: s.dpad)
        func up(_ y: Int16) -> Int16 { y == .min ? .max : -y }
        c.leftStick = (s.leftX, up(s.leftY))
        c.rightStick = (s.rightX, up(s.rightY))
        c.triggers = (s.l2Wide >> 1, s.r2Wide >> 1)
    }

    /// A contact of the touch space as a trackpad position (±32767, +y up): the inverse of the codec's.
    static func pad(_ contact: WireTouchContact) -> (x: Int16, y: Int16)? {
        guard contact.active else { return nil }
        let x = Int32(contact.x) * 65536 / Int32(TouchPoint.width) - 32768
        let y = 32767 - Int32(contact.y) * 65536 / Int32(TouchPoint.height)
        return (Int16(clamping: x), Int16(clamping: y))
    }

    /// The wire's IMU sample (deg/s and g on the DualSense's axes) as the Deck's raw counts on its
    /// own axes: the codec reads the Deck's (x, y, z) as (x, z, −y), so the Deck's are (x, −z, y).
    static func imu(_ s: WireMotionSample) -> (gyro: Vector3, accel: Vector3) {
        func count(_ v: Float, _ per: Int32) -> Int16 { Int16(clamping: Int64((Double(v) * Double(per)).rounded())) }
        let dps = SteamDeckLayout.gyroPerDegreePerSecond, g = SteamDeckLayout.accelPerG
        return (Vector3(x: count(s.gyroX, dps), y: count(-s.gyroZ, dps), z: count(s.gyroY, dps)),
                Vector3(x: count(s.accelX, g), y: count(-s.accelZ, g), z: count(s.accelY, g)))
    }

    public func apply(_ s: PadStateSnapshot) throws { if Self.take(s, into: &controls) { try device.send(controls) } }

    /// The wire's state, touch or IMU sample into the Deck's controls (the Steam Controller's host
    /// pad keeps them too); true when anything changed, so the report is sent.
    static func take(_ s: PadStateSnapshot, into controls: inout SteamDeckReports.Controls) -> Bool {
        changed(&controls) { update(&$0, with: s) }
    }

    static func take(_ touch: TouchSnapshot, into controls: inout SteamDeckReports.Controls) -> Bool {
        changed(&controls) { update(&$0, with: touch) }
    }

    private static func changed(_ controls: inout SteamDeckReports.Controls, by change: (inout SteamDeckReports.Controls) -> Void) -> Bool {
        var next = controls
        change(&next)
        guard next != controls else { return false }
        controls = next
        return true
    }

    static func take(_ sample: WireMotionSample, into controls: inout SteamDeckReports.Controls) {
        (controls.gyro, controls.accel) = imu(sample)
    }

    /// The wire's touch as the two trackpads (the Steam Controller's host pad takes it the same way).
    static func update(_ c: inout SteamDeckReports.Controls, with touch: TouchSnapshot) {
        c.leftPad = nil
        c.rightPad = nil
        c.padPressure = (0, 0)
        // Contact id 0 is the left pad, 1 the right (docs/wire.md); another pad's two fingers land
        // on the two pads the same way, the first on each pad giving its pressure.
        func place(_ contact: WireTouchContact) {
            guard let at = pad(contact) else { return }
            let pressure = (contact.pressure ?? 0) / 2
            if contact.id & 1 == 0 {
                if c.leftPad == nil { c.leftPad = at; c.padPressure.left = pressure }
            } else if c.rightPad == nil {
                c.rightPad = at; c.padPressure.right = pressure
            }
        }
        // Each contact by itself: no array per touch snapshot on the input path.
        place(touch.first)
        place(touch.second)
    }

    public func apply(_ touch: TouchSnapshot) throws { if Self.take(touch, into: &controls) { try device.send(controls) } }

    public func apply(_ motion: MotionBatch) throws {
        for i in 0..<motion.count {
            Self.take(motion[i], into: &controls)
            try device.send(controls)
        }
    }

    public var feedbackDescriptors: [FileDescriptor] { [device.outputReadyDescriptor] }

    public func takeFeedback(into messages: inout [WireMessage]) throws {
        var pulses = NewestPulses()
        for report in device.takeOutputs() {
            switch Self.message(for: report, slot: arrival.slot, lastLevels: &lastLevels, sequence: &sequence) {
            case .trackpadPulse(let pulse)?: pulses.take(pulse)
            case let message?: messages.append(message)
            case nil: break
            }
        }
        pulses.append(to: &messages)
    }

    /// A command a game sent the Deck (report number 0 first): a rumble whose motors changed
    /// becomes a lease (the strong motor is the low-frequency one), a trackpad's pulse train a
    /// `TrackpadPulse` (cut to the wire's longest train); the rest (settings) stays here.
    static func message(for report: [UInt8], slot: PadSlot, lastLevels: inout MotorLevels, sequence: inout WireSequence) -> WireMessage? {
        let command = Array(report.dropFirst())
        if let p = SteamDeckCommands.pulse(command) {
            sequence = sequence.next
            let count = min(p.count, TrackpadPulse.largestCount(onMicros: p.onMicros, offMicros: p.offMicros))
            return .trackpadPulse(TrackpadPulse(slot: slot, sequence: sequence, side: p.pad, onMicros: p.onMicros, offMicros: p.offMicros,
                                                count: count, gain: p.gain))
        }
        guard let speeds = SteamDeckCommands.rumbleLevels(command) else { return nil }
        let levels = MotorLevels(low: UInt8(speeds.strong >> 8), high: UInt8(speeds.weak >> 8))
        guard levels != lastLevels else { return nil }
        lastLevels = levels
        return .rumble(.unnumbered(slot: slot, levels: levels, ttlMillis: levels.isSilent ? 0 : GameOutputTranslator.rumbleLeaseMillis))
    }

    public func remove() { device.stop() }
}

/// The newest pulse train per trackpad of one feedback pass: a program's burst of them is one
/// train on the pad, which plays one at a time (older ones would only play late). Both Valve
/// families' host pads keep it.
struct NewestPulses {
    private var left, right, both: TrackpadPulse?

    /// A train on both pads supersedes the older ones on each, so a one-pad train kept beside it
    /// is always the newer and goes after it.
    mutating func take(_ pulse: TrackpadPulse) {
        switch pulse.side {
        case .left: left = pulse
        case .right: right = pulse
        case .both: both = pulse; left = nil; right = nil
        }
    }

    /// Each held train, by itself (no array per feedback pass), the both-pads one first.
    func append(to messages: inout [WireMessage]) {
        if let both { messages.append(.trackpadPulse(both)) }
        if let left { messages.append(.trackpadPulse(left)) }
        if let right { messages.append(.trackpadPulse(right)) }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
