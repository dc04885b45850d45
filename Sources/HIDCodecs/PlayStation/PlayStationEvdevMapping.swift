/// The evdev values hid-playstation would report for a decoded state, so a uinput device we create
/// looks the same as the kernel's own nodes: "gamepad", "motion sensors" and "touchpad".
public struct PlayStationEvdevFrame: Hashable, Sendable {
    // gamepad node
    public var absX: Int32 = 0, absY: Int32 = 0, absRX: Int32 = 0, absRY: Int32 = 0, absZ: Int32 = 0, absRZ: Int32 = 0
    public var hat0X: Int32 = 0, hat0Y: Int32 = 0
    public var buttons: GamepadButtons = []
    // motion sensors node (accel ABS_X/Y/Z in 1/8192 g, gyro ABS_RX/RY/RZ in 1/1024 deg/s)
    public var accel: (x: Int32, y: Int32, z: Int32) = (0, 0, 0)
    public var gyro: (x: Int32, y: Int32, z: Int32) = (0, 0, 0)
    // touchpad node
    public var touching = false
    public var clickPressed = false
    public var slots: (TouchSlot, TouchSlot) = (TouchSlot(), TouchSlot())

    public struct TouchSlot: Hashable, Sendable {
        public var trackingID: Int32 = -1
        public var x: Int32 = 0
        public var y: Int32 = 0
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.absX == b.absX && a.absY == b.absY && a.absRX == b.absRX && a.absRY == b.absRY && a.absZ == b.absZ && a.absRZ == b.absRZ
            && a.hat0X == b.hat0X && a.hat0Y == b.hat0Y && a.buttons == b.buttons && a.accel == b.accel && a.gyro == b.gyro
            && a.touching == b.touching && a.clickPressed == b.clickPressed && a.slots.0 == b.slots.0 && a.slots.1 == b.slots.1
    }
    public func hash(into h: inout Hasher) { h.combine(absX); h.combine(absY); h.combine(buttons) }

    /// Gamepad key codes as hid-playstation maps them (ps_gamepad_map), from the button table.
    public static let gamepadKeys: [(code: String, button: GamepadButtons)] =
        GamepadButtons.table.filter { $0.button.isSubset(of: hidPlayStationKeys) }.compactMap { row in row.evdevName.map { ($0, row.button) } }
    private static let hidPlayStationKeys: GamepadButtons = [.west, .south, .east, .north, .l1, .r1, .l2, .r2, .create, .options, .l3, .r3, .ps]

    /// Value of an event code on a node ("gamepad", "motion_sensors", "touchpad"); nil if that node has no such code.
    public func value(node: String, code: String, slot: Int? = nil) -> Int32? {
        switch node {
        case "gamepad":
            switch code {
            case "ABS_X": return absX
            case "ABS_Y": return absY
            case "ABS_RX": return absRX
            case "ABS_RY": return absRY
            case "ABS_Z": return absZ
            case "ABS_RZ": return absRZ
            case "ABS_HAT0X": return hat0X
            case "ABS_HAT0Y": return hat0Y
            default:
                return Self.gamepadKeys.first { $0.code == code }.map { buttons.contains($0.button) ? 1 : 0 }
            }
        case "motion_sensors":
            switch code {
            case "ABS_X": return accel.x
            case "ABS_Y": return accel.y
            case "ABS_Z": return accel.z
            case "ABS_RX": return gyro.x
            case "ABS_RY": return gyro.y
            case "ABS_RZ": return gyro.z
            default: return nil
            }
        case "touchpad":
            let s = (slot ?? 0) == 0 ? slots.0 : slots.1
            switch code {
            case "BTN_TOUCH": return touching ? 1 : 0
            case "BTN_LEFT": return clickPressed ? 1 : 0
            case "ABS_MT_TRACKING_ID": return s.trackingID
            case "ABS_MT_POSITION_X": return s.x
            case "ABS_MT_POSITION_Y": return s.y
            default: return nil
            }
        default: return nil
        }
    }
}

/// Turns decoded states into evdev frames. Stateful only for multitouch tracking ids, which
/// the kernel's input-mt hands out from a per-device counter whenever a slot starts a contact.
public struct PlayStationEvdevMapper: Sendable {
    public var calibration: MotionCalibration
    private var nextTrackingID: Int32 = 0
    private var current = PlayStationEvdevFrame()

    public init(calibration: MotionCalibration = .nominal) { self.calibration = calibration }

    public mutating func map(_ state: GamepadState) -> PlayStationEvdevFrame {
        var f = current
        f.absX = Int32(state.leftStick.x); f.absY = Int32(state.leftStick.y)
        f.absRX = Int32(state.rightStick.x); f.absRY = Int32(state.rightStick.y)
        f.absZ = Int32(state.l2); f.absRZ = Int32(state.r2)
        (f.hat0X, f.hat0Y) = state.dpad.axes
        f.buttons = state.buttons
        if state.hasMotion {
            let c = calibration
            f.gyro = (c.gyro.x.apply(state.gyro.x), c.gyro.y.apply(state.gyro.y), c.gyro.z.apply(state.gyro.z))
            f.accel = (c.accel.x.apply(state.accel.x), c.accel.y.apply(state.accel.y), c.accel.z.apply(state.accel.z))
        }
        if state.hasTouch {
            f.clickPressed = state.buttons.contains(.touchpad)
            f.slots.0 = slot(previous: f.slots.0, point: state.touch0)
            f.slots.1 = slot(previous: f.slots.1, point: state.touch1)
            f.touching = state.touch0.active || state.touch1.active
        }
        current = f
        return f
    }

    private mutating func slot(previous: PlayStationEvdevFrame.TouchSlot, point: TouchPoint) -> PlayStationEvdevFrame.TouchSlot {
        guard point.active else { return PlayStationEvdevFrame.TouchSlot(trackingID: -1, x: previous.x, y: previous.y) }
        var slot = previous
        if slot.trackingID < 0 {
            slot.trackingID = nextTrackingID
            nextTrackingID = (nextTrackingID + 1) & 0xFFFF
        }
        slot.x = Int32(point.x)
        slot.y = Int32(point.y)
        return slot
    }
}
