/// What an emulated Deck (and later the host's Deck) sends and answers: its state report built
/// from controls (`SteamDeckLayout`'s offsets, the inverse of `SteamDeckInputCodec`), its report
/// descriptor, and its replies to the commands the kernel and SDL send at probe.
public enum SteamDeckReports {
    /// The controller interface's report descriptor: vendor page 0xFFFF usage 1, a 64-byte input
    /// (usages 2, 3) and a 64-byte feature report (usages 6, 7), no report id and no output
    /// report. 38 bytes, as a real Deck's interface 2 gives it (held to a recording by the tests).
    public static let descriptor: [UInt8] = [
        0x06, 0xff, 0xff, 0x09, 0x01, 0xa1, 0x01,
        0x09, 0x02, 0x09, 0x03, 0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x40, 0x81, 0x02,
        0x09, 0x06, 0x09, 0x07, 0x15, 0x00, 0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x40, 0xb1, 0x02,
        0xc0,
    ]
    /// The product string a Deck gives (its USB device's; the recorded Deck's).
    public static let name = "Valve Software Steam Controller"

    /// The controls of one state report, in the Deck's own terms (signed sticks, +y up).
    public struct Controls: Equatable, Sendable {
        public var buttons: GamepadButtons = []
        public var dpad: DPad = .none
        public var leftStick: (x: Int16, y: Int16) = (0, 0)
        public var rightStick: (x: Int16, y: Int16) = (0, 0)
        public var triggers: (left: UInt16, right: UInt16) = (0, 0)
        /// nil: not touched.
        public var leftPad: (x: Int16, y: Int16)? = nil
        public var rightPad: (x: Int16, y: Int16)? = nil
        /// The pads' pressure, 0...32767 (`SteamDeckInputCodec.fullPressure`).
        public var padPressure: (left: UInt16, right: UInt16) = (0, 0)
        public var accel: Vector3 = Vector3(x: 0, y: 0, z: Int16(SteamDeckLayout.accelPerG))
        public var gyro: Vector3 = .zero
        public init() {}
        public static func == (a: Controls, b: Controls) -> Bool {
            a.buttons == b.buttons && a.dpad == b.dpad && a.leftStick == b.leftStick && a.rightStick == b.rightStick
                && a.triggers == b.triggers && a.leftPad.map { [$0.x, $0.y] } == b.leftPad.map { [$0.x, $0.y] }
                && a.rightPad.map { [$0.x, $0.y] } == b.rightPad.map { [$0.x, $0.y] } && a.accel == b.accel && a.gyro == b.gyro
                && a.padPressure == b.padPressure
        }
    }

    /// The 64-byte state report of `controls`, numbered `sequence`.
    public static func state(_ c: Controls, sequence: UInt32) -> [UInt8] {
        typealias L = SteamDeckLayout
        var r = [UInt8](repeating: 0, count: L.length)
        r.replaceSubrange(0..<4, with: L.header)
        func put16(_ value: UInt16, at o: Int) { r[o] = UInt8(value & 0xff); r[o + 1] = UInt8(value >> 8) }
        func put(_ value: Int16, at o: Int) { put16(UInt16(bitPattern: value), at: o) }
        for i in 0..<4 { r[L.sequence + i] = UInt8(truncatingIfNeeded: sequence >> (8 * UInt32(i))) }
        for bit in L.buttonMap where c.buttons.contains(bit.button) { r[L.buttons + bit.byte] |= bit.mask }
        r[L.buttons + L.dpadByte] |= c.dpad.bits(up: L.dpadUp, down: L.dpadDown, left: L.dpadLeft, right: L.dpadRight)
        if let pad = c.leftPad { r[L.buttons + L.padTouchByte] |= L.leftPadTouch; put(pad.x, at: L.leftPad); put(pad.y, at: L.leftPad + 2) }
        if let pad = c.rightPad { r[L.buttons + L.padTouchByte] |= L.rightPadTouch; put(pad.x, at: L.rightPad); put(pad.y, at: L.rightPad + 2) }
        put(c.accel.x, at: L.accel); put(c.accel.y, at: L.accel + 2); put(c.accel.z, at: L.accel + 4)
        put(c.gyro.x, at: L.gyro); put(c.gyro.y, at: L.gyro + 2); put(c.gyro.z, at: L.gyro + 4)
        put(Int16.max, at: L.quaternion)   // w = 1: no rotation
        put16(min(c.triggers.left, 32767), at: L.triggers); put16(min(c.triggers.right, 32767), at: L.triggers + 2)
        put(c.leftStick.x, at: L.leftStick); put(c.leftStick.y, at: L.leftStick + 2)
        put(c.rightStick.x, at: L.rightStick); put(c.rightStick.y, at: L.rightStick + 2)
        put16(min(c.padPressure.left, SteamDeckInputCodec.fullPressure), at: L.padPressure)
        put16(min(c.padPressure.right, SteamDeckInputCodec.fullPressure), at: L.padPressure + 2)
        return r
    }

    /// The string attribute command (0xAE) and its attribute 1, the unit serial: hid-steam sends
    /// `ae 16 01` at probe (6.8 on; `ae 15 01` from 6.3) and reads `ae <length> 01 <ascii>` back,
    /// taking length − 1 characters.
    public static let stringAttribute: UInt8 = 0xAE
    public static let serialAttribute: UInt8 = 0x01

    /// The attributes command (0xAE's sibling 0x83): `83 <length>` then 5-byte records (u8 tag,
    /// u32 little-endian value). hid-steam reads them at register from 7.x and refuses a reply
    /// without them. A Deck's records: product id, capabilities, bootloader and firmware build
    /// times, hardware id, connection interval (µs: 4000, its report period) and three zeros.
    public static let attributes: UInt8 = 0x83
    public static let attributeRecords: [(tag: UInt8, value: UInt32)] = [
        (0x01, 0x1205), (0x02, 0), (0x0a, 0x62A9_122B), (0x04, 0x6544_098F), (0x09, 0x29),
        (0x0b, SteamDeckLayout.reportMicros), (0x0d, 0), (0x0c, 0), (0x0e, 0),
    ]

    /// The reply a Deck gives to `command` (a feature SET_REPORT's data after the report number),
    /// read back with GET_REPORT: its attributes, the serial for the string attribute, else the
    /// command echoed.
    /// 65 bytes: the report number 0, then the 64-byte report.
    public static func reply(to command: [UInt8], serial: String) -> [UInt8] {
        var reply = [UInt8](repeating: 0, count: 1 + SteamDeckCommands.featureLength)
        guard let opcode = command.first else { return reply }
        if opcode == attributes {
            var records: [UInt8] = []
            for record in attributeRecords {
                records.append(record.tag)
                for i: UInt32 in 0..<4 { records.append(UInt8(truncatingIfNeeded: record.value >> (8 * i))) }
            }
            reply.replaceSubrange(1..<(3 + records.count), with: [attributes, UInt8(records.count)] + records)
        } else if opcode == stringAttribute, command.count >= 3, command[2] == serialAttribute {
            let text = Array(serial.utf8.prefix(20))
            reply.replaceSubrange(1..<(4 + text.count), with: [stringAttribute, UInt8(text.count + 1), serialAttribute] + text)
        } else {
            reply[1] = opcode
        }
        return reply
    }
}
