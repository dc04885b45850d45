/// Writes a `GamepadState` as a PlayStation input report with the same layout table the decoder
/// reads, so an emulated pad sends exactly what a real one would (and decode(encode(s)) == s is
/// a test, not an assumption).
public struct PlayStationInputEncoder: Sendable {
    public let layout: PlayStationInputLayout

    public init(layout: PlayStationInputLayout) { self.layout = layout }

    public func encode(_ s: GamepadState) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: layout.length)
        report.withUnsafeMutableBytes { encode(s, into: $0) }
        return report
    }

    /// Fills `r` (at least `layout.length` bytes) without allocating.
    public func encode(_ s: GamepadState, into r: UnsafeMutableRawBufferPointer) {
        let l = layout, b = l.base
        for i in 0..<l.length { r[i] = 0 }
        r[0] = l.reportID
        if l.base >= 2 { r[1] = l.header }
        r[b + l.leftX] = UInt8(clamping: s.leftStick.x); r[b + l.leftY] = UInt8(clamping: s.leftStick.y)
        r[b + l.rightX] = UInt8(clamping: s.rightStick.x); r[b + l.rightY] = UInt8(clamping: s.rightStick.y)
        r[b + l.l2] = s.l2; r[b + l.r2] = s.r2
        r[b + l.buttons] = s.dpad.rawValue
        for bit in l.buttonMap where s.buttons.contains(bit.button) { r[b + l.buttons + bit.byte] |= bit.mask }
        if let sequence = l.sequence { r[b + sequence] = s.sequence }
        if let gyro = l.gyro, let accel = l.accel {
            put(s.motion.first.gyro, r, b + gyro)
            put(s.motion.first.accel, r, b + accel)
        }
        if let ts = l.sensorTimestamp {
            for i in 0..<(l.sensorTimestampIs32Bit ? 4 : 2) { r[b + ts + i] = UInt8(truncatingIfNeeded: s.sensorTimestamp >> (8 * UInt32(i))) }
        }
        if let count = l.touchReportCount { r[b + count] = 1 }
        if let touch = l.touchPoints {
            put(s.touch0, r, b + touch)
            put(s.touch1, r, b + touch + 4)
        }
        if let status = l.status, let battery = s.battery {
            let level = min(battery.percent / 10, 10)
            switch l.batteryEncoding {
            case .dualSense:
                let state: UInt8 = battery.state == .charging ? 0x1 : battery.state == .full ? 0x2 : 0x0
                r[b + status] = level | state << 4
                r[b + status + 1] = (s.headphonesConnected ? 0x01 : 0) | (s.microphoneConnected ? 0x02 : 0)
            case .dualShock4:
                // Cable bit 0x10 set while charging; level in the low nibble (0...10 on cable, 0...9 on battery).
                r[b + status] = level | (battery.state == .charging || battery.state == .full ? 0x10 : 0)
                    | (s.headphonesConnected ? 0x20 : 0) | (s.microphoneConnected ? 0x40 : 0)
            case .none: break
            }
        }
        if l.checksummed {
            let body = l.length - BluetoothCRC.trailerSize
            let crc = BluetoothCRC.checksum(seed: .input, over: UnsafeRawBufferPointer(rebasing: r[0..<body]))
            for i in 0..<4 { r[body + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        }
    }

    private func put(_ v: Vector3, _ r: UnsafeMutableRawBufferPointer, _ o: Int) {
        put(v.x, r, o); put(v.y, r, o + 2); put(v.z, r, o + 4)
    }

    private func put(_ value: Int16, _ r: UnsafeMutableRawBufferPointer, _ o: Int) {
        let bits = UInt16(bitPattern: value)
        r[o] = UInt8(truncatingIfNeeded: bits); r[o + 1] = UInt8(truncatingIfNeeded: bits >> 8)
    }

    private func put(_ t: TouchPoint, _ r: UnsafeMutableRawBufferPointer, _ o: Int) {
        r[o] = (t.id & 0x7f) | (t.active ? 0 : 0x80)
        r[o + 1] = UInt8(truncatingIfNeeded: t.x)
        r[o + 2] = UInt8(truncatingIfNeeded: (t.x >> 8) & 0x0f) | UInt8(truncatingIfNeeded: (t.y & 0x0f) << 4)
        r[o + 3] = UInt8(truncatingIfNeeded: t.y >> 4)
    }
}
