import HIDCodecs
import PadSystem

/// A pad's evdev nodes, typed: what `forward` converts to wire snapshots on every frame, without
/// names or allocations. Values are the kernel's own (axis ranges are the node's).
public struct EvdevPadFrame: Equatable, Sendable {
    public struct Contact: Equatable, Sendable {
        public var trackingID: Int32
        public var x: Int32
        public var y: Int32
    }
    public struct Triple: Equatable, Sendable {
        public var x: Int32, y: Int32, z: Int32
    }

    public var buttons: GamepadButtons = []
    public var dpad: DPad = .none
    public var leftX: Int32 = 0, leftY: Int32 = 0, rightX: Int32 = 0, rightY: Int32 = 0
    public var l2: Int32 = 0, r2: Int32 = 0
    /// The first two active contacts, in slot order.
    public var firstContact: Contact?
    public var secondContact: Contact?
    public var gyro: Triple?
    public var accel: Triple?
    public var sensorTime: Int32?

    public init() {}
}

/// A pad's state as its evdev nodes show it: raw evdev values, named as in `padgate watch --json`.
/// Built from `EvdevPadFrame` at the edge, for display and tests.
public struct LivePadState: Codable, Equatable, Sendable {
    public struct Touch: Codable, Equatable, Sendable {
        public var id: Int32
        public var active: Bool
        public var x: Int32
        public var y: Int32
    }

    public var buttons: [String] = []
    public var dpad: String = "none"
    public var left_stick: [Int32] = [0, 0]
    public var right_stick: [Int32] = [0, 0]
    public var l2: Int32 = 0
    public var r2: Int32 = 0
    public var touch: [Touch] = []
    public var gyro: [Int32]?
    public var accel: [Int32]?
    public var sensor_time: Int32?

    public init() {}

    public init(_ frame: EvdevPadFrame, motion: Bool) {
        buttons = frame.buttons.names
        dpad = frame.dpad.name
        left_stick = [frame.leftX, frame.leftY]
        right_stick = [frame.rightX, frame.rightY]
        l2 = frame.l2; r2 = frame.r2
        touch = [frame.firstContact, frame.secondContact].compactMap { $0.map { Touch(id: $0.trackingID, active: true, x: $0.x, y: $0.y) } }
        if motion {
            gyro = frame.gyro.map { [$0.x, $0.y, $0.z] }
            accel = frame.accel.map { [$0.x, $0.y, $0.z] }
            sensor_time = frame.sensorTime
        }
    }
}

/// Reads a pad's evdev nodes together and keeps its `LivePadState`.
public final class LivePadReader {
    public let pad: Pad
    public let gamepad: EvdevDevice?
    public let touchpad: EvdevDevice?
    public let motion: EvdevDevice?
    private var motionTimestamp: Int32?

    public init(pad: Pad) throws {
        self.pad = pad
        gamepad = try pad.node(.gamepad).map { try EvdevDevice(path: $0.path) }
        axes = gamepad.map(GamepadAxisCodes.init) ?? GamepadAxisCodes()
        gamepadKeys = GamepadButtons.table.compactMap { row in
            (pad.kind.numbersButtonsByLabel ? row.xpadKey : row.evdevKey).map { (UInt32($0), row.button) }
        }
        touchpad = try pad.node(.touchpad).map { try EvdevDevice(path: $0.path) }
        motion = try pad.node(.motion).map { try EvdevDevice(path: $0.path) }
        devices = [gamepad, touchpad, motion].compactMap { $0 }
        if gamepad == nil && touchpad == nil && motion == nil {
            throw DeviceError.unsupported("\(pad.name) has no evdev node padgate can read")
        }
    }

    /// Which axis is which on the gamepad node, worked out once from what it has.
    public let axes: GamepadAxisCodes

    /// The nodes that exist, listed once: `readAvailable` runs for every report.
    public let devices: [EvdevDevice]
    public var descriptors: [FileDescriptor] { devices.map(\.descriptor) }

    /// Reads what is queued on every node. Returns true when a frame (SYN_REPORT) completed.
    public func readAvailable() throws -> Bool {
        var framed = false
        for device in devices {
            let isMotion = device === motion
            try device.readAvailable { event in
                if UInt32(event.type) == EvdevCode.EV_SYN && UInt32(event.code) == EvdevCode.SYN_REPORT { framed = true }
                if isMotion && UInt32(event.type) == EvdevCode.EV_MSC && UInt32(event.code) == EvdevCode.MSC_TIMESTAMP {
                    motionTimestamp = event.value
                }
            }
        }
        return framed
    }

    public func snapshot() -> LivePadState {
        LivePadState(frame(), motion: motion != nil)
    }

    /// Which gamepad-node key is which button, from the one button table in this pad's convention.
    private let gamepadKeys: [(code: UInt32, button: GamepadButtons)]

    /// The nodes' current values, typed. Allocates nothing.
    public func frame() -> EvdevPadFrame {
        var frame = EvdevPadFrame()
        if let g = gamepad {
            for (code, button) in gamepadKeys where g.value(type: EvdevCode.EV_KEY, code: code) != 0 { frame.buttons.insert(button) }
            let x: Int32, y: Int32
            if g.has(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_HAT0X) {
                x = g.value(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_HAT0X); y = g.value(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_HAT0Y)
            } else {
                let key = { (code: UInt32) -> Int32 in g.value(type: EvdevCode.EV_KEY, code: code) != 0 ? 1 : 0 }
                x = key(EvdevCode.BTN_DPAD_RIGHT) - key(EvdevCode.BTN_DPAD_LEFT); y = key(EvdevCode.BTN_DPAD_DOWN) - key(EvdevCode.BTN_DPAD_UP)
            }
            frame.dpad = DPad(axes: (x.signum(), y.signum()))
            let abs = { (code: UInt32) in g.value(type: EvdevCode.EV_ABS, code: code) }
            frame.leftX = abs(axes.leftX); frame.leftY = abs(axes.leftY)
            frame.rightX = abs(axes.rightX); frame.rightY = abs(axes.rightY)
            frame.l2 = abs(axes.leftTrigger); frame.r2 = abs(axes.rightTrigger)
        }
        if let t = touchpad {
            if t.value(type: EvdevCode.EV_KEY, code: EvdevCode.BTN_LEFT) != 0 { frame.buttons.insert(.touchpad) }
            for slot in 0..<t.slotCount {
                let tracking = t.slotValue(slot, code: EvdevCode.ABS_MT_TRACKING_ID)
                guard tracking >= 0 else { continue }
                let contact = EvdevPadFrame.Contact(trackingID: tracking, x: t.slotValue(slot, code: EvdevCode.ABS_MT_POSITION_X),
                                                    y: t.slotValue(slot, code: EvdevCode.ABS_MT_POSITION_Y))
                if frame.firstContact == nil { frame.firstContact = contact } else if frame.secondContact == nil { frame.secondContact = contact }
            }
        }
        if let m = motion {
            let abs = { (code: UInt32) in m.value(type: EvdevCode.EV_ABS, code: code) }
            frame.accel = .init(x: abs(EvdevCode.ABS_X), y: abs(EvdevCode.ABS_Y), z: abs(EvdevCode.ABS_Z))
            frame.gyro = .init(x: abs(EvdevCode.ABS_RX), y: abs(EvdevCode.ABS_RY), z: abs(EvdevCode.ABS_RZ))
            frame.sensorTime = motionTimestamp
        }
        return frame
    }
}

/// Where a gamepad node keeps its sticks and triggers. xpad and hid-playstation put the right stick
/// on RX/RY and the triggers on Z/RZ; a pad mapped by hid-input from its descriptor (an Xbox over
/// Bluetooth, most generic pads) has the right stick on Z/RZ (its usages) and the triggers on
/// BRAKE/GAS (Simulation Brake and Accelerator).
public struct GamepadAxisCodes: Sendable, Equatable {
    public var leftX = EvdevCode.ABS_X, leftY = EvdevCode.ABS_Y
    public var rightX = EvdevCode.ABS_RX, rightY = EvdevCode.ABS_RY
    public var leftTrigger = EvdevCode.ABS_Z, rightTrigger = EvdevCode.ABS_RZ

    public init() {}

    public init(hasAxis: (UInt32) -> Bool) {
        if !hasAxis(EvdevCode.ABS_RX), hasAxis(EvdevCode.ABS_Z) {
            rightX = EvdevCode.ABS_Z; rightY = EvdevCode.ABS_RZ
            leftTrigger = EvdevCode.ABS_BRAKE; rightTrigger = EvdevCode.ABS_GAS
        } else if !hasAxis(EvdevCode.ABS_Z) {
            leftTrigger = EvdevCode.ABS_BRAKE; rightTrigger = EvdevCode.ABS_GAS
        }
    }

    public init(_ device: EvdevDevice) { self.init { device.has(type: EvdevCode.EV_ABS, code: $0) } }
}
