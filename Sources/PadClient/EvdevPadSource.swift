import Feedback
import Foundation
import HIDCodecs
import Logging
import PadDevices
import PadFamilies
import PadSystem
import WireProtocol

/// A physical pad read through its evdev nodes (any pad the kernel drives), with its feedback
/// through `PadFeedback`. The kernel has already calibrated motion: its axes carry resolutions
/// (counts per g, per deg/s) that turn values into the wire's units. On top of that, the gyro bias
/// `padgate calibrate` measured for this pad is subtracted (docs/calibration.md).
public final class EvdevPadSource: PhysicalPadSource {
    public let arrival: PadArrival
    public let pad: Pad
    let reader: LivePadReader
    /// The pad's evdev nodes, held while it is forwarded (nil: `forward --shared`).
    public let grab: EvdevGrab?
    public let sessionFeedback: SessionFeedback
    public private(set) var controls: PadStateSnapshot
    public private(set) var touch: TouchSnapshot
    var motion = MotionBacklog()
    var lastMotion: (time: Int32?, gyro: EvdevPadFrame.Triple, accel: EvdevPadFrame.Triple)?
    let motionUnits: MotionUnits?
    /// What `padgate calibrate` stored for this pad, applied to every motion sample; nil: none.
    public let motionCorrection: MotionCorrection?
    /// The stored bias or the continuous estimate, taken off every gyro sample.
    private(set) var gyroCorrection: GyroCorrection
    public var gyroCalibration: GyroCalibrationMode { gyroCorrection.mode }

    /// As `forward` opens a pad: the gyro calibrated as `gyroCalibration` says, from the bias stored for its serial.
    public convenience init(pad: Pad, slot: PadSlot, options: PadFeedback.Options = .init(), gyroCalibration: GyroCalibrationMode = .continuous,
                            exclusive: Bool = false) throws {
        try self.init(pad: pad, slot: slot, options: options,
                      motionCorrection: gyroCalibration == .off ? nil : MotionCorrectionStore.forwardingCorrection(for: pad), gyroCalibration: gyroCalibration,
                      exclusive: exclusive)
    }

    /// `motionCorrection` applied as `gyroCalibration` says (by default, as given: no continuous estimate).
    /// `exclusive`: the pad's evdev nodes, those read here among them, are held for this source
    /// alone while it lives (`EvdevGrab`).
    public init(pad: Pad, slot: PadSlot, options: PadFeedback.Options = .init(), motionCorrection: MotionCorrection?,
                gyroCalibration: GyroCalibrationMode = .stored, exclusive: Bool = false) throws {
        self.pad = pad
        reader = try LivePadReader(pad: pad)
        grab = exclusive ? try EvdevGrab(pad, reading: reader.devices) : nil
        motionUnits = reader.motion.map(MotionUnits.init)
        gyroCorrection = GyroCorrection(mode: gyroCalibration, stored: motionCorrection)
        self.motionCorrection = gyroCorrection.stored
        sessionFeedback = SessionFeedback(pad: pad, options: options)
        arrival = PadArrival(slot: slot, type: pad.kind, vendorID: pad.vendorID, productID: pad.productID,
                             capabilities: pad.wireCapabilities(offeringMicrophone: options.offersMicrophone), name: pad.name, identity: PadDrivers.driver(for: pad.kind).identity(of: pad, hidraw: nil).wire.withUnit(of: pad))
        controls = .neutral(slot)
        touch = TouchSnapshot(slot: slot)
        update()
    }

    public var descriptors: [FileDescriptor] { reader.descriptors }

    public func readInput() throws -> Bool {
        guard try reader.readAvailable() else { return false }
        update()
        return true
    }

    /// Axis ranges, read once: they do not change while the node is open.
    private lazy var scales: (left: (StickScale?, StickScale?), right: (StickScale?, StickScale?), l2: StickScale?, r2: StickScale?) = {
        func scale(_ code: UInt32) -> StickScale? {
            reader.gamepad?.axisInfo(code).flatMap { $0.maximum > $0.minimum ? StickScale(minimum: $0.minimum, maximum: $0.maximum) : nil }
        }
        let axes = reader.axes
        return ((scale(axes.leftX), scale(axes.leftY)), (scale(axes.rightX), scale(axes.rightY)), scale(axes.leftTrigger), scale(axes.rightTrigger))
    }()

    func update() {
        let frame = reader.frame()
        let state = gamepadState(frame)
        controls = PadSnapshots.controls(state, slot: arrival.slot)
        touch = PadSnapshots.touch(state, slot: arrival.slot)
        // A new sample has a new timestamp; a pad whose clock stalls still counts when values move.
        if let units = motionUnits, let gyro = frame.gyro, let accel = frame.accel,
           lastMotion.map({ $0.time != frame.sensorTime || $0.gyro != gyro || $0.accel != accel }) ?? true {
            lastMotion = (frame.sensorTime, gyro, accel)
            let g = units.gyro(gyro), a = units.accel(accel)
            var sample = WireMotionSample(timestampMicros: UInt32(bitPattern: frame.sensorTime ?? 0),
                                          gyroX: Float(g.x), gyroY: Float(g.y), gyroZ: Float(g.z),
                                          accelX: Float(a.x), accelY: Float(a.y), accelZ: Float(a.z))
            gyroCorrection.correct(&sample)
            motion.append(sample)
        }
    }

    /// The evdev frame as the typed state the converter takes: sticks in the 16-bit form the
    /// `.evdev` format names (each axis's own range centred exactly), triggers 0...255.
    func gamepadState(_ frame: EvdevPadFrame) -> GamepadState {
        var state = GamepadState()
        state.format = .evdev
        state.buttons = frame.buttons
        state.dpad = frame.dpad
        let s = scales
        state.leftStick = StickPosition(x: Self.sixteenBit(frame.leftX, s.left.0), y: Self.sixteenBit(frame.leftY, s.left.1))
        state.rightStick = StickPosition(x: Self.sixteenBit(frame.rightX, s.right.0), y: Self.sixteenBit(frame.rightY, s.right.1))
        state.l2 = Self.trigger(frame.l2, s.l2)
        state.r2 = Self.trigger(frame.r2, s.r2)
        state.l2Fine = Self.fineTrigger(frame.l2, s.l2)
        state.r2Fine = Self.fineTrigger(frame.r2, s.r2)
        state.hasTouch = reader.touchpad != nil
        if let c = frame.firstContact { state.touch0 = Self.point(c) }
        if let c = frame.secondContact { state.touch1 = Self.point(c) }
        return state
    }

    static func point(_ c: EvdevPadFrame.Contact) -> TouchPoint {
        TouchPoint(id: UInt8(truncatingIfNeeded: c.trackingID) & 0x7f, active: true, x: UInt16(clamping: c.x), y: UInt16(clamping: c.y))
    }

    /// Any axis range to 0...65535 with the range's middle at 32768, exactly invertible.
    static func sixteenBit(_ value: Int32, _ scale: StickScale?) -> UInt16 {
        UInt16(bitPattern: scale?.wire(value) ?? 0) ^ 0x8000
    }

    static func trigger(_ value: Int32, _ scale: StickScale?) -> UInt8 {
        guard let scale else { return 0 }
        return UInt8(clamping: (Int64(value) - Int64(scale.minimum)) * 255 / (Int64(scale.maximum) - Int64(scale.minimum)))
    }

    /// A trigger with more than 256 steps (hid-microsoft's 0...1023) at full resolution, rounded.
    static func fineTrigger(_ value: Int32, _ scale: StickScale?) -> UInt16? {
        guard let scale, Int64(scale.maximum) - Int64(scale.minimum) > 255 else { return nil }
        let span = Int64(scale.maximum) - Int64(scale.minimum)
        let clamped = min(max(Int64(value), Int64(scale.minimum)), Int64(scale.maximum)) - Int64(scale.minimum)
        return UInt16((clamped * 65535 + span / 2) / span)
    }

    public func takeMotion(_ body: (WireMotionSample) -> Void) { motion.drain(body) }
}
