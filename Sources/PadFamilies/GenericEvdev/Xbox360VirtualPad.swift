import Feedback
import HIDCodecs
import Logging
import MonotonicTime
import PadDevices
import PadSystem
import WireProtocol

/// A forwarded pad shown as an Xbox 360-style evdev pad through uinput, for games that want
/// XInput-like devices. Force feedback a game plays on it becomes rumble leases.
public final class Xbox360VirtualPad: VirtualPad {
    public var presentation: String { "uinput" }
    public let arrival: PadArrival
    let device: UInputGamepad
    let receiver: UInputRumbleReceiver
    private static let log = Logger(label: "padgate.host.uinput")
    /// uinput has no kernel timer: the effects' delay, length and count are honoured here, as
    /// ff-memless honours them for a real pad.
    var playback = MemlessPlayback()
    var sent = MotorLevels.silent

    public init(arrival: PadArrival) throws {
        self.arrival = arrival
        device = try UInputGamepad(identity: .xbox360, phys: PadPhys.hostVirtual)
        receiver = UInputRumbleReceiver(uinput: device.descriptor)
    }

    /// xpad's codes for an Xbox 360 pad (drivers/input/joystick/xpad.c): A, B, X, Y by their
    /// labels, so the button in the west position (X) is BTN_X (0x133), not BTN_WEST.
    static let buttonKeys: [(GamepadButtons, UInt32)] = GamepadButtons.table.compactMap { row in row.xpadKey.map { (row.button, UInt32($0)) } }

    public func apply(_ s: PadStateSnapshot) throws {
        let buttons = GamepadButtons(rawValue: s.buttons)
        for (button, code) in Self.buttonKeys { try device.emit(type: EvdevCode.EV_KEY, code: code, value: buttons.contains(button) ? 1 : 0) }
        try device.emit(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_X, value: Int32(s.leftX))
        try device.emit(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_Y, value: Int32(s.leftY))
        try device.emit(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_RX, value: Int32(s.rightX))
        try device.emit(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_RY, value: Int32(s.rightY))
        try device.emit(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_Z, value: Int32(s.l2))
        try device.emit(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_RZ, value: Int32(s.r2))
        let hat = DPad(hat: s.dpad).axes
        try device.emit(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_HAT0X, value: hat.x)
        try device.emit(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_HAT0Y, value: hat.y)
        try device.sync()
    }

    public func apply(_ touch: TouchSnapshot) throws {}
    public func apply(_ motion: MotionBatch) throws {}
    public var feedbackDescriptors: [FileDescriptor] { [device.descriptor] }

    public func takeFeedback(into messages: inout [WireMessage]) throws {
        let now = MonotonicInstant.now
        for event in try receiver.service() {
            Self.log.trace("force feedback from the game: \(event)")
            switch event {
            case .uploaded(let effect):
                playback.upload(id: Int(effect.id), MemlessPlayback.Effect(levels: effect.levels, delay: effect.delay, length: effect.length), now: now)
            case .erased(let id): playback.erase(id: Int(id))
            case .played(let id, let count): playback.play(id: Int(id), count: count, now: now)
            }
        }
        messages += Self.leases(for: &playback, sent: &sent, slot: arrival.slot, now: now)
    }

    public var feedbackDeadline: MonotonicInstant? { playback.nextChange(after: .now) }
    /// The playback's next change bounds the rumble playing now: an effect's end, or another's start.
    public var rumbleEnds: MonotonicInstant? { playback.nextChange(after: .now) }

    /// A lease when the combined level changed: held (the host renews it) until the playback
    /// itself says stop, so an effect ends when its length and count say, not when it is erased.
    /// Its time to live never reaches past the playback's next change: the client's renderer ends
    /// the motors there by itself, even if the stop that follows comes late or never.
    static func leases(for playback: inout MemlessPlayback, sent: inout MotorLevels,
                       slot: PadSlot, now: MonotonicInstant) -> [WireMessage] {
        let levels = playback.levels(now: now)
        guard levels != sent else { return [] }
        sent = levels
        var ttl = levels.isSilent ? 0 : GameOutputTranslator.rumbleLeaseMillis
        if ttl > 0, let end = playback.nextChange(after: now) { ttl = min(ttl, RumbleLease.millis(from: now, until: end)) }
        return [.rumble(.unnumbered(slot: slot, levels: levels, ttlMillis: ttl))]
    }

    public func remove() {}
}
