/// A pad's state as its evdev nodes show it: raw evdev values, named as in `padgate watch --json`.
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
        touchpad = try pad.node(.touchpad).map { try EvdevDevice(path: $0.path) }
        motion = try pad.node(.motion).map { try EvdevDevice(path: $0.path) }
        if gamepad == nil && touchpad == nil && motion == nil {
            throw DeviceError.unsupported("\(pad.name) has no evdev node padgate can read")
        }
    }

    public var devices: [EvdevDevice] { [gamepad, touchpad, motion].compactMap { $0 } }
    public var fileDescriptors: [Int32] { devices.map(\.fileDescriptor) }

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
        var state = LivePadState()
        if let g = gamepad {
            state.buttons = GamepadButtonMap.gamepadKeys
                .filter { g.value(type: EvdevCode.EV_KEY, code: $0.code) != 0 }.map(\.name)
            if g.has(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_HAT0X) {
                state.dpad = GamepadButtonMap.dpadName(x: g.value(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_HAT0X),
                                                       y: g.value(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_HAT0Y))
            } else {
                let key = { (code: UInt32) -> Int32 in g.value(type: EvdevCode.EV_KEY, code: code) != 0 ? 1 : 0 }
                state.dpad = GamepadButtonMap.dpadName(x: key(EvdevCode.BTN_DPAD_RIGHT) - key(EvdevCode.BTN_DPAD_LEFT),
                                                       y: key(EvdevCode.BTN_DPAD_DOWN) - key(EvdevCode.BTN_DPAD_UP))
            }
            let abs = { (code: UInt32) in g.value(type: EvdevCode.EV_ABS, code: code) }
            state.left_stick = [abs(EvdevCode.ABS_X), abs(EvdevCode.ABS_Y)]
            state.right_stick = [abs(EvdevCode.ABS_RX), abs(EvdevCode.ABS_RY)]
            // Most drivers put analog triggers on Z/RZ; a few (xpad on some firmwares) on BRAKE/GAS.
            let hasZ = g.has(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_Z)
            state.l2 = abs(hasZ ? EvdevCode.ABS_Z : EvdevCode.ABS_BRAKE)
            state.r2 = abs(hasZ ? EvdevCode.ABS_RZ : EvdevCode.ABS_GAS)
        }
        if let t = touchpad {
            if t.value(type: EvdevCode.EV_KEY, code: EvdevCode.BTN_LEFT) != 0 { state.buttons.append("touchpad") }
            for slot in 0..<t.slotCount {
                let tracking = t.slotValue(slot, code: EvdevCode.ABS_MT_TRACKING_ID)
                guard tracking >= 0 else { continue }
                state.touch.append(.init(id: tracking, active: true,
                                         x: t.slotValue(slot, code: EvdevCode.ABS_MT_POSITION_X),
                                         y: t.slotValue(slot, code: EvdevCode.ABS_MT_POSITION_Y)))
            }
        }
        if let m = motion {
            let abs = { (code: UInt32) in m.value(type: EvdevCode.EV_ABS, code: code) }
            state.accel = [abs(EvdevCode.ABS_X), abs(EvdevCode.ABS_Y), abs(EvdevCode.ABS_Z)]
            state.gyro = [abs(EvdevCode.ABS_RX), abs(EvdevCode.ABS_RY), abs(EvdevCode.ABS_RZ)]
            state.sensor_time = motionTimestamp
        }
        return state
    }
}
