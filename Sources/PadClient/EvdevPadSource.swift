import Feedback
import Foundation
import HIDCodecs
import PadDevices
import WireProtocol

/// A physical pad read through its evdev nodes (any pad the kernel drives), with its feedback
/// through `PadFeedback`. The kernel has already calibrated motion: its axes carry resolutions
/// (counts per g, per deg/s) that turn values into the wire's units. On top of that, the gyro bias
/// `padgate calibrate` measured for this pad is subtracted (docs/calibration.md).
public final class EvdevPadSource: PadSource {
    public let arrival: PadArrival
    public let pad: Pad
    let reader: LivePadReader
    var feedback: PadFeedback
    let feedbackOptions: PadFeedback.Options
    public private(set) var controls: PadStateSnapshot
    public private(set) var touch: TouchSnapshot
    var motion: [WireMotionSample] = []
    var lastMotion: (time: Int32?, gyro: [Int32], accel: [Int32])?
    let motionUnits: MotionUnits?
    /// What `padgate calibrate` stored for this pad, applied to every motion sample; nil: none.
    public let motionCorrection: MotionCorrection?

    /// Applies the motion correction stored for the pad's serial, if there is one.
    public convenience init(pad: Pad, slot: PadSlot, options: PadFeedback.Options = .init()) throws {
        let correction = MotionCorrectionStore.standard.correction(for: pad) {
            FileHandle.standardError.write(Data("padgate: \($0); forwarding \(pad.name) without it\n".utf8))
        }
        try self.init(pad: pad, slot: slot, options: options, motionCorrection: correction)
    }

    public init(pad: Pad, slot: PadSlot, options: PadFeedback.Options = .init(), motionCorrection: MotionCorrection?) throws {
        self.pad = pad
        reader = try LivePadReader(pad: pad)
        motionUnits = reader.motion.map(MotionUnits.init)
        self.motionCorrection = motionCorrection
        feedback = PadFeedback(pad: pad, options: options)
        feedbackOptions = options
        arrival = PadArrival(slot: slot, type: pad.kind, vendorID: pad.vendorID, productID: pad.productID,
                             capabilities: Self.capabilities(pad), name: pad.name)
        controls = .neutral(slot)
        touch = TouchSnapshot(slot: slot)
        update()
    }

    static func capabilities(_ pad: Pad) -> WireCapabilities {
        var caps: WireCapabilities = [.analogTriggers]
        let c = pad.capabilities
        if c.contains(.rumble) { caps.insert(.rumble) }
        if c.contains(.touchpad) { caps.insert(.touchpad) }
        if c.contains(.motion) { caps.formUnion([.accelerometer, .gyro]) }
        if c.contains(.battery) { caps.insert(.battery) }
        if c.contains(.lightbar) { caps.insert(.rgbLED) }
        if c.contains(.playerLEDs) { caps.insert(.playerLEDs) }
        if c.contains(.adaptiveTriggers) { caps.insert(.adaptiveTriggers) }
        return caps
    }

    public var descriptors: [Int32] { reader.fileDescriptors }

    public func readInput() throws -> Bool {
        guard try reader.readAvailable() else { return false }
        update()
        return true
    }

    func update() {
        let s = reader.snapshot()
        var c = PadStateSnapshot.neutral(arrival.slot)
        for name in s.buttons {
            if let button = GamepadButtons.named.first(where: { $0.name == name })?.button { c.buttons |= button.rawValue }
        }
        c.dpad = (DPad.allCases.first { $0.name == s.dpad } ?? .none).rawValue
        if let g = reader.gamepad {
            c.leftX = Self.normalise(s.left_stick[0], g.axisInfo(EvdevCode.ABS_X))
            c.leftY = Self.normalise(s.left_stick[1], g.axisInfo(EvdevCode.ABS_Y))
            c.rightX = Self.normalise(s.right_stick[0], g.axisInfo(EvdevCode.ABS_RX))
            c.rightY = Self.normalise(s.right_stick[1], g.axisInfo(EvdevCode.ABS_RY))
            c.l2 = Self.trigger(s.l2, g.axisInfo(EvdevCode.ABS_Z) ?? g.axisInfo(EvdevCode.ABS_BRAKE))
            c.r2 = Self.trigger(s.r2, g.axisInfo(EvdevCode.ABS_RZ) ?? g.axisInfo(EvdevCode.ABS_GAS))
        }
        controls = c
        var t = TouchSnapshot(slot: arrival.slot, sequence: touch.sequence)
        if let first = s.touch.first { t.first = WireTouchContact(id: UInt8(truncatingIfNeeded: first.id), active: true, x: UInt16(clamping: first.x), y: UInt16(clamping: first.y)) }
        if s.touch.count > 1 { let second = s.touch[1]; t.second = WireTouchContact(id: UInt8(truncatingIfNeeded: second.id), active: true, x: UInt16(clamping: second.x), y: UInt16(clamping: second.y)) }
        touch = t
        // A new sample has a new timestamp; a pad whose clock stalls still counts when values move.
        if let units = motionUnits, let gyro = s.gyro, let accel = s.accel,
           lastMotion.map({ $0.time != s.sensor_time || $0.gyro != gyro || $0.accel != accel }) ?? true {
            lastMotion = (s.sensor_time, gyro, accel)
            let g = motionCorrection.map { $0.correctGyro(units.gyro(gyro)) } ?? units.gyro(gyro), a = units.accel(accel)
            motion.append(WireMotionSample(
                timestampMicros: UInt32(bitPattern: s.sensor_time ?? 0),
                gyroX: Float(g.x), gyroY: Float(g.y), gyroZ: Float(g.z),
                accelX: Float(a.x), accelY: Float(a.y), accelZ: Float(a.z)))
            if motion.count > 16 { motion.removeFirst(motion.count - 16) }  // nobody is draining: keep the newest
        }
    }

    /// Any axis range to the wire's signed 16 bits, with the range's middle at 0 (exactly invertible).
    static func normalise(_ value: Int32, _ info: EvdevDevice.AxisInfo?) -> Int16 {
        guard let info, info.maximum > info.minimum else { return 0 }
        return StickScale(minimum: info.minimum, maximum: info.maximum).wire(value)
    }

    static func trigger(_ value: Int32, _ info: EvdevDevice.AxisInfo?) -> UInt8 {
        guard let info, info.maximum > info.minimum else { return 0 }
        return UInt8(clamping: (Int64(value) - Int64(info.minimum)) * 255 / (Int64(info.maximum) - Int64(info.minimum)))
    }

    public func takeMotion(_ body: (WireMotionSample) -> Void) {
        for sample in motion { body(sample) }
        motion.removeAll(keepingCapacity: true)
    }

    public func apply(_ lease: RumbleLease) throws {
        feedback.receive(RumbleMessage(lease))
        try feedback.pump()
    }

    public func apply(_ output: HIDOutputMessage) throws { try feedback.apply(output) }

    public var feedbackDeadline: ContinuousClock.Instant? {
        feedback.nextDeadline.map { ContinuousClock.now + ($0 - feedback.now) }
    }
    public func pumpFeedback() throws { try feedback.pump() }

    /// Motors to zero now; a fresh renderer takes the next session's leases.
    public func silence() {
        feedback.close()
        feedback = PadFeedback(pad: pad, options: feedbackOptions)
    }
}
