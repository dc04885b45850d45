/// What an emulated Steam Controller (2026) sends: its HID interface's report descriptor and its
/// state report built from controls (`SteamControllerLayout`'s offsets, the inverse of
/// `SteamControllerInputCodec`).
public enum SteamControllerReports {
    /// The report ids and sizes (without the id) the controller's HID interface declares, wired or
    /// through a puck's slot (docs/research/valve-pads.md §5): the lizard mouse and keyboard in
    /// their own collections, then the vendor page's inputs, outputs and features.
    public static let vendorInputs: [(id: UInt8, size: UInt8)] = [(0x42, 53), (0x44, 5), (0x79, 1), (0x43, 14), (0x7B, 12), (0x45, 45)]
    public static let vendorOutputs: [(id: UInt8, size: UInt8)] = [
        (0x80, 9), (0x81, 7), (0x82, 3), (0x83, 9), (0x84, 8), (0x85, 3), (0x86, 3), (0x87, 63), (0x89, 63), (0x88, 63),
    ]
    public static let vendorFeatures: [(id: UInt8, size: UInt8)] = [(0x01, 63), (0x02, 63)]
    public static let lizardMouse: UInt8 = 0x40
    public static let lizardKeyboard: UInt8 = 0x41

    /// The descriptor, written from those ids and sizes: a mouse (report 0x40: five buttons, x, y,
    /// wheel, pan), a boot keyboard (0x41) and the vendor collection (page 0xFF00, usage 1), each
    /// vendor report one array of bytes under the usage of its id.
    public static let descriptor: [UInt8] = {
        var d: [UInt8] = [
            // Mouse.
            0x05, 0x01, 0x09, 0x02, 0xa1, 0x01, 0x85, lizardMouse, 0x09, 0x01, 0xa1, 0x00,
            0x05, 0x09, 0x19, 0x01, 0x29, 0x05, 0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x05, 0x81, 0x02,
            0x75, 0x03, 0x95, 0x01, 0x81, 0x01,
            0x05, 0x01, 0x09, 0x30, 0x09, 0x31, 0x09, 0x38, 0x15, 0x81, 0x25, 0x7f, 0x75, 0x08, 0x95, 0x03, 0x81, 0x06,
            0x05, 0x0c, 0x0a, 0x38, 0x02, 0x95, 0x01, 0x81, 0x06,
            0xc0, 0xc0,
            // Keyboard.
            0x05, 0x01, 0x09, 0x06, 0xa1, 0x01, 0x85, lizardKeyboard,
            0x05, 0x07, 0x19, 0xe0, 0x29, 0xe7, 0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x08, 0x81, 0x02,
            0x75, 0x08, 0x95, 0x01, 0x81, 0x01,
            0x19, 0x00, 0x29, 0x65, 0x15, 0x00, 0x25, 0x65, 0x75, 0x08, 0x95, 0x06, 0x81, 0x00,
            0xc0,
            // Vendor page.
            0x06, 0x00, 0xff, 0x09, 0x01, 0xa1, 0x01, 0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08,
        ]
        for (reports, main) in [(vendorInputs, UInt8(0x81)), (vendorOutputs, 0x91), (vendorFeatures, 0xb1)] {
            for r in reports { d += [0x85, r.id, 0x95, r.size, 0x09, r.id, main, 0x02] }
        }
        return d + [0xc0]
    }()

    /// The product string of the wired controller's USB device.
    public static let name = "Valve Steam Controller"

    /// The controls of one state report: the Deck's, in the same terms.
    public typealias Controls = SteamDeckReports.Controls

    /// The 54-byte state report (0x42) of `controls`, numbered `sequence`, its IMU clock at `micros`.
    public static func state(_ c: Controls, sequence: UInt8, micros: UInt32) -> [UInt8] {
        typealias L = SteamControllerLayout
        var r = [UInt8](repeating: 0, count: L.stateLength)
        r[0] = L.state
        r[L.sequence] = sequence
        func put16(_ value: UInt16, at o: Int) { r[o] = UInt8(value & 0xff); r[o + 1] = UInt8(value >> 8) }
        func put(_ value: Int16, at o: Int) { put16(UInt16(bitPattern: value), at: o) }
        for bit in L.buttonMap where c.buttons.contains(bit.button) { r[L.buttons + bit.byte] |= bit.mask }
        r[L.buttons + L.dpadByte] |= c.dpad.bits(up: L.dpadUp, down: L.dpadDown, left: L.dpadLeft, right: L.dpadRight)
        put16(UInt16(min(c.triggers.left, 32767)), at: L.triggers)
        put16(UInt16(min(c.triggers.right, 32767)), at: L.triggers + 2)
        put(c.leftStick.x, at: L.leftStick); put(c.leftStick.y, at: L.leftStick + 2)
        put(c.rightStick.x, at: L.rightStick); put(c.rightStick.y, at: L.rightStick + 2)
        if let pad = c.leftPad {
            r[L.buttons + L.leftPadTouch.byte] |= L.leftPadTouch.mask
            put(pad.x, at: L.leftPad); put(pad.y, at: L.leftPad + 2)
        }
        put16(min(c.padPressure.left, SteamDeckInputCodec.fullPressure), at: L.leftPad + L.padPressure)
        put16(min(c.padPressure.right, SteamDeckInputCodec.fullPressure), at: L.rightPad + L.padPressure)
        if let pad = c.rightPad {
            r[L.buttons + L.rightPadTouch.byte] |= L.rightPadTouch.mask
            put(pad.x, at: L.rightPad); put(pad.y, at: L.rightPad + 2)
        }
        for i in 0..<4 { r[L.imuClock + i] = UInt8(truncatingIfNeeded: micros >> (8 * UInt32(i))) }
        put(c.accel.x, at: L.accel); put(c.accel.y, at: L.accel + 2); put(c.accel.z, at: L.accel + 4)
        put(c.gyro.x, at: L.gyro); put(c.gyro.y, at: L.gyro + 2); put(c.gyro.z, at: L.gyro + 4)
        put(Int16.max, at: L.fieldsEnd)   // quaternion w = 1: no rotation
        return r
    }
}
