/// A Switch Pro Controller's calibration as it keeps it in its SPI flash (dekuNukem's
/// Nintendo_Switch_Reverse_Engineering notes; read the same way by hid-nintendo and SDL): two
/// 48-byte blocks, the factory one at 0x6020 (IMU at 0x6020, left stick at 0x603D, right at
/// 0x6046) and the user one at 0x8010 (each part behind the magic 0xB2 0xA1: left stick at
/// 0x8010, right at 0x801B, IMU at 0x8026). These two blocks are what travels with a Switch Pro's
/// arrival, and what the host's virtual pad answers SPI reads with.
public struct SwitchProCalibration: Hashable, Sendable {
    public static let factoryAddress: UInt32 = 0x6020
    public static let userAddress: UInt32 = 0x8010
    public static let blockLength = 48
    static let userMagic: [UInt8] = [0xB2, 0xA1]

    public var factory: [UInt8]
    public var user: [UInt8]

    public struct Stick: Hashable, Sendable {
        public var min: Int32, center: Int32, max: Int32
        public init(min: Int32, center: Int32, max: Int32) { self.min = min; self.center = center; self.max = max }
    }
    public struct IMUAxis: Hashable, Sendable {
        public var offset: Int16, scale: Int16
        public init(offset: Int16, scale: Int16) { self.offset = offset; self.scale = scale }
        var divisor: Int32 { Int32(scale) - Int32(offset) }
    }

    public init?(factory: [UInt8], user: [UInt8]) {
        guard factory.count == Self.blockLength, user.count == Self.blockLength else { return nil }
        self.factory = factory; self.user = user
    }

    /// A pad's defaults: factory sticks centred at 2000 with 1500 either way (hid-nintendo's
    /// fallback), IMU offsets 0 and scales 16384 (accelerometer) and 13371 (gyro); no user data.
    public static let defaults: SwitchProCalibration = {
        var factory = [UInt8](repeating: 0xFF, count: blockLength)
        for i in 0..<3 {
            put16(&factory, 2 * i, 0); put16(&factory, 6 + 2 * i, 16384)
            put16(&factory, 12 + 2 * i, 0); put16(&factory, 18 + 2 * i, 13371)
        }
        factory.replaceSubrange(29..<38, with: packLeft(x: Stick(min: 500, center: 2000, max: 3500), y: Stick(min: 500, center: 2000, max: 3500)))
        factory.replaceSubrange(38..<47, with: packRight(x: Stick(min: 500, center: 2000, max: 3500), y: Stick(min: 500, center: 2000, max: 3500)))
        return SwitchProCalibration(factory: factory, user: [UInt8](repeating: 0xFF, count: blockLength))!
    }()

    /// The bytes at `address` as the pad's flash holds them: from the two blocks, 0xFF elsewhere
    /// (an erased flash); nil for a read longer than the 0x1D bytes one reply carries.
    public func spiRead(address: UInt32, length: Int) -> [UInt8]? {
        guard length <= 0x1D else { return nil }
        return (0..<length).map { i in
            let a = address &+ UInt32(i)
            if a >= Self.factoryAddress, a < Self.factoryAddress + UInt32(Self.blockLength) { return factory[Int(a - Self.factoryAddress)] }
            if a >= Self.userAddress, a < Self.userAddress + UInt32(Self.blockLength) { return user[Int(a - Self.userAddress)] }
            return 0xFF
        }
    }

    // MARK: What the drivers make of it (hid-nintendo's joycon_request_calibration and friends)

    public typealias Sticks = (leftX: Stick, leftY: Stick, rightX: Stick, rightY: Stick)
    public typealias IMU = (accel: [IMUAxis], gyro: [IMUAxis])

    /// Left and right sticks (x, y): the user calibration where its magic says so, else the factory
    /// one. Decoded from the bytes on each call: per-report code keeps its own copy.
    public var sticks: Sticks {
        let left = hasUser(at: 0) ? Self.unpackLeft(Array(user[2..<11])) : Self.unpackLeft(Array(factory[29..<38]))
        let right = hasUser(at: 11) ? Self.unpackRight(Array(user[13..<22])) : Self.unpackRight(Array(factory[38..<47]))
        return (left.x, left.y, right.x, right.y)
    }

    /// Accelerometer and gyro per axis (x, y, z); decoded on each call, like `sticks`.
    public var imu: IMU {
        let data = hasUser(at: 22) ? Array(user[24..<48]) : Array(factory[0..<24])
        func s16(_ o: Int) -> Int16 { Int16(bitPattern: UInt16(data[o]) | UInt16(data[o + 1]) << 8) }
        return ((0..<3).map { IMUAxis(offset: s16(2 * $0), scale: s16(6 + 2 * $0)) },
                (0..<3).map { IMUAxis(offset: s16(12 + 2 * $0), scale: s16(18 + 2 * $0)) })
    }

    func hasUser(at offset: Int) -> Bool { user[offset...].starts(with: Self.userMagic) }

    /// What a host may trust: every stick with min < centre < max inside 12 bits (hid-nintendo's
    /// own check), every IMU scale away from its offset and within 2× of the nominal one.
    public var isPlausible: Bool {
        let s = sticks
        for stick in [s.leftX, s.leftY, s.rightX, s.rightY] where !(0 <= stick.min && stick.min < stick.center && stick.center < stick.max && stick.max <= 4095) {
            return false
        }
        let (accel, gyro) = imu
        func near(_ axis: IMUAxis, _ nominal: Int32) -> Bool { axis.divisor * 2 >= nominal && axis.divisor <= nominal * 2 }
        return accel.allSatisfy { near($0, 16384) } && gyro.allSatisfy { near($0, 13371) }
    }

    // MARK: Packing (12-bit pairs, as the flash holds them)

    static func pack12(_ a: Int32, _ b: Int32) -> [UInt8] {
        var bytes: [UInt8] = [0, 0, 0]
        pack12(a, b, into: &bytes, at: 0)
        return bytes
    }
    /// The same three bytes written in place (the reports: no array per report).
    static func pack12(_ a: Int32, _ b: Int32, into d: inout [UInt8], at o: Int) {
        let a = UInt32(truncatingIfNeeded: a) & 0xFFF, b = UInt32(truncatingIfNeeded: b) & 0xFFF
        d[o] = UInt8(a & 0xFF); d[o + 1] = UInt8((a >> 8) | ((b & 0xF) << 4)); d[o + 2] = UInt8(b >> 4)
    }
    static func unpack12(_ d: ArraySlice<UInt8>) -> (Int32, Int32) {
        let i = d.startIndex
        return (Int32(d[i]) | Int32(d[i + 1] & 0xF) << 8, Int32(d[i + 1] >> 4) | Int32(d[i + 2]) << 4)
    }
    /// Left: max above centre, centre, min below centre; right: centre, min below, max above.
    public static func packLeft(x: Stick, y: Stick) -> [UInt8] {
        pack12(x.max - x.center, y.max - y.center) + pack12(x.center, y.center) + pack12(x.center - x.min, y.center - y.min)
    }
    public static func packRight(x: Stick, y: Stick) -> [UInt8] {
        pack12(x.center, y.center) + pack12(x.center - x.min, y.center - y.min) + pack12(x.max - x.center, y.max - y.center)
    }
    static func unpackLeft(_ d: [UInt8]) -> (x: Stick, y: Stick) {
        let above = unpack12(d[0..<3]), centre = unpack12(d[3..<6]), below = unpack12(d[6..<9])
        return (Stick(min: centre.0 - below.0, center: centre.0, max: centre.0 + above.0), Stick(min: centre.1 - below.1, center: centre.1, max: centre.1 + above.1))
    }
    static func unpackRight(_ d: [UInt8]) -> (x: Stick, y: Stick) {
        let centre = unpack12(d[0..<3]), below = unpack12(d[3..<6]), above = unpack12(d[6..<9])
        return (Stick(min: centre.0 - below.0, center: centre.0, max: centre.0 + above.0), Stick(min: centre.1 - below.1, center: centre.1, max: centre.1 + above.1))
    }
    public static func put16(_ d: inout [UInt8], _ o: Int, _ v: Int16) {
        d[o] = UInt8(truncatingIfNeeded: v); d[o + 1] = UInt8(truncatingIfNeeded: UInt16(bitPattern: v) >> 8)
    }
}

/// hid-nintendo's arithmetic (joycon_map_stick_val, joycon_parse_imu_report), and its inverses: the
/// raw count whose reading is a given evdev value, so a host's pad with the physical pad's
/// calibration reads exactly what the physical pad's driver read.
public enum SwitchProMath {
    public static let maxStick: Int32 = 32767
    public static let accelPerG: Int32 = 4096
    /// Per deg/s, with hid-nintendo's ×1000 precision scale (14.247 counts per deg/s).
    public static let gyroPerDegreePerSecond: Int32 = 14247

    public static func stick(_ raw: Int32, _ cal: SwitchProCalibration.Stick) -> Int32 {
        let value: Int32 = raw > cal.center ? (raw - cal.center) * maxStick / (cal.max - cal.center)
                                            : (cal.center - raw) * -maxStick / (cal.center - cal.min)
        return min(max(value, -maxStick), maxStick)
    }
    public static func gyro(_ raw: Int16, _ axis: SwitchProCalibration.IMUAxis) -> Int32 {
        // mult_frac(1000 × (raw − offset), scale, scale − offset), in C's truncating arithmetic.
        let x = Int64(1000) * (Int64(raw) - Int64(axis.offset)), n = Int64(axis.scale), d = Int64(axis.divisor)
        guard d != 0 else { return 0 }
        return Int32(truncatingIfNeeded: (x / d) * n + ((x % d) * n) / d)
    }
    public static func accel(_ raw: Int16, _ axis: SwitchProCalibration.IMUAxis) -> Int32 {
        guard axis.divisor != 0 else { return 0 }
        return Int32(raw) * Int32(axis.scale) / axis.divisor
    }

    /// The raw count (12-bit stick, 16-bit IMU) whose reading is nearest `value`: the estimate
    /// through the inverse scale, then its neighbours, the nearest reading winning.
    static func nearest(_ value: Int32, estimate: Double, range: ClosedRange<Int32>, reading: (Int32) -> Int32) -> Int32 {
        guard estimate.isFinite else { return range.lowerBound }
        let start = Int32(max(Double(range.lowerBound), min(Double(range.upperBound), estimate.rounded())))
        var best = start, bestError = abs(Int64(reading(start)) - Int64(value))
        for delta in -3...3 where delta != 0 {
            let candidate = start + Int32(delta)
            guard range.contains(candidate) else { continue }
            let error = abs(Int64(reading(candidate)) - Int64(value))
            if error < bestError { best = candidate; bestError = error }
        }
        return best
    }

    public static func rawStick(_ value: Int32, _ cal: SwitchProCalibration.Stick) -> UInt16 {
        let span = Double(value > 0 ? cal.max - cal.center : cal.center - cal.min)
        let estimate = Double(cal.center) + Double(value) * span / Double(maxStick)
        return UInt16(nearest(value, estimate: estimate, range: 0...4095) { stick($0, cal) })
    }
    public static func rawGyro(_ value: Int32, _ axis: SwitchProCalibration.IMUAxis) -> Int16 {
        let estimate = Double(axis.offset) + Double(value) * Double(axis.divisor) / (1000 * Double(axis.scale))
        return Int16(nearest(value, estimate: estimate, range: -32768...32767) { gyro(Int16($0), axis) })
    }
    public static func rawAccel(_ value: Int32, _ axis: SwitchProCalibration.IMUAxis) -> Int16 {
        let estimate = Double(value) * Double(axis.divisor) / Double(axis.scale)
        return Int16(nearest(value, estimate: estimate, range: -32768...32767) { accel(Int16($0), axis) })
    }
}
