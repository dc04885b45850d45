/// How the gyro bias is applied. Kernels since about 6.2 found that subtracting the reported gyro bias
/// made things worse and treat it as 0, with the denominator `|plus−bias| + |minus−bias|`. Older kernels
/// and SDL subtract the bias and use `plus − minus`. See docs/calibration.md for why `kernel` is our default.
public enum CalibrationConvention: String, Sendable, CaseIterable {
    case kernel
    case legacy
    public static let `default`: CalibrationConvention = .kernel
}

/// calibrated = numerator × (raw − bias) / denominator, with the kernel's truncating mult_frac.
public struct AxisCalibration: Hashable, Sendable {
    public var bias: Int32
    public var numerator: Int32 { didSet { split() } }
    public var denominator: Int32 { didSet { split() } }
    /// numerator / denominator and its remainder, worked out once: `apply` runs six times per
    /// report, and a 64-bit division is the slowest thing in it.
    @usableFromInline private(set) var quotient: Int64 = 0, remainder: Int64 = 0

    public init(bias: Int32, numerator: Int32, denominator: Int32) {
        self.bias = bias; self.numerator = numerator; self.denominator = denominator
        split()
    }

    private mutating func split() {
        guard denominator != 0 else { quotient = 0; remainder = 0; return }
        quotient = Int64(numerator) / Int64(denominator)
        remainder = Int64(numerator) % Int64(denominator)
    }

    /// How far (either way) an axis's scale, numerator / denominator, may be from the sensor's nominal scale
    /// before the blob is treated as garbage. Real pads are within a few percent (the fixtures: 0.97–1.00);
    /// 4× leaves room for a sensor range one or two binary steps from nominal yet catches wiped or corrupt
    /// blobs, whose scale is off by orders of magnitude (a real blob with gyro plus 1, minus −1 gives 8640×).
    public static let plausibleScaleFactor: Int64 = 4

    /// Whether this axis's scale is within `plausibleScaleFactor` of `nominal`'s (integer cross-multiplication).
    public func isPlausible(nominal: AxisCalibration) -> Bool {
        let scaled = Int64(numerator) * Int64(nominal.denominator), reference = Int64(denominator) * Int64(nominal.numerator)
        return scaled <= Self.plausibleScaleFactor * reference && reference <= Self.plausibleScaleFactor * scaled
    }

    /// Same arithmetic as hid-playstation: mult_frac(numer, raw - bias, denom), so results match evdev exactly.
    /// Inlinable: the client converts six axes per report from another module.
    @inlinable
    public func apply(_ raw: Int16) -> Int32 {
        guard denominator != 0 else { return Int32(raw) }
        let n = Int64(raw) - Int64(bias)
        let rest = remainder * n
        // A 32-bit division where the product fits, as it does for real pads: it is several
        // times faster than a 64-bit one, and truncates the same way.
        let fraction = Int32(exactly: rest).map { Int64($0 / denominator) } ?? rest / Int64(denominator)
        return Int32(truncatingIfNeeded: quotient * n + fraction)
    }
}

public struct AxisTriple: Hashable, Sendable {
    public var x: AxisCalibration
    public var y: AxisCalibration
    public var z: AxisCalibration
    public init(x: AxisCalibration, y: AxisCalibration, z: AxisCalibration) { self.x = x; self.y = y; self.z = z }
    public var all: [AxisCalibration] { [x, y, z] }
}

public struct MotionCalibration: Hashable, Sendable {
    public static let gyroResolutionPerDegreePerSecond: Int32 = 1024   // DS_GYRO_RES_PER_DEG_S
    public static let accelResolutionPerG: Int32 = 8192                // DS_ACC_RES_PER_G
    /// Fallbacks when a blob's axis is unusable: the sensors' nominal full scale (DS_GYRO_RANGE / DS_ACC_RANGE over S16_MAX).
    public static let nominalGyro = AxisCalibration(bias: 0, numerator: 2048 * gyroResolutionPerDegreePerSecond, denominator: Int32(Int16.max))
    public static let nominalAccel = AxisCalibration(bias: 0, numerator: 4 * accelResolutionPerG, denominator: Int32(Int16.max))

    public var gyro: AxisTriple
    public var accel: AxisTriple
    public var convention: CalibrationConvention

    public static let nominal = MotionCalibration(
        gyro: AxisTriple(x: nominalGyro, y: nominalGyro, z: nominalGyro),
        accel: AxisTriple(x: nominalAccel, y: nominalAccel, z: nominalAccel), convention: .default)

    public init(gyro: AxisTriple, accel: AxisTriple, convention: CalibrationConvention) {
        self.gyro = gyro; self.accel = accel; self.convention = convention
    }
}

/// A parsed calibration plus the axes that had to fall back to nominal scale.
public struct CalibrationResult: Sendable {
    public var calibration: MotionCalibration
    public var warnings: [String]
}

public enum CalibrationError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooShort(got: Int, need: Int)
    case unexpectedReportID(UInt8, expected: [UInt8])
    case badChecksum(reportID: UInt8)
    /// With no bus given, the report could not tell it: the trailer is neither zero (USB) nor a valid Bluetooth CRC32.
    case unverifiableTrailer(reportID: UInt8)

    public var description: String {
        switch self {
        case .tooShort(let got, let need): return "calibration feature report is \(got) bytes; it needs at least \(need) (read feature report 0x05 on a DualSense, 0x02 (USB) or 0x05 (Bluetooth) on a DualShock 4)"
        case .unexpectedReportID(let id, let expected): return "feature report \(hexByte(id)) is not a calibration report; expected \(expected.map(hexByte).joined(separator: " or "))"
        case .badChecksum(let id): return "Bluetooth feature report \(hexByte(id)) fails its CRC32 check (seed 0xA3); re-read it from the pad"
        case .unverifiableTrailer(let id):
            return "feature report \(hexByte(id)) ends in 4 bytes that are neither zero (as read over USB) nor a valid Bluetooth CRC32 (seed 0xA3): it is corrupt, so re-read it from the pad; if it really came over USB, decode it as USB"
        }
    }
}

/// Parses the motion calibration feature reports of Sony pads (layouts as in hid-playstation's
/// dualsense_get_calibration_data / dualshock4_get_calibration_data).
public enum CalibrationParser {
    static let minimumLength = 35  // report id + 17 little-endian int16 values
    /// The whole report as pads send it (DS_FEATURE_REPORT_CALIBRATION_SIZE): the values, 2 reserved bytes, then
    /// 4 more that are zero over USB and the CRC32 over Bluetooth.
    static let fullLength = 41

    struct RawBlob {
        var gyroBias: (Int16, Int16, Int16)
        var gyroPlus: (Int16, Int16, Int16)
        var gyroMinus: (Int16, Int16, Int16)
        var speedPlus: Int16, speedMinus: Int16
        var accelPlus: (Int16, Int16, Int16)
        var accelMinus: (Int16, Int16, Int16)
    }

    /// DualSense feature 0x05 (USB, or Bluetooth with a CRC32 trailer). Both forms are 41 bytes, so the length
    /// cannot tell them apart: over USB the last 4 bytes are zero, over Bluetooth they are the CRC. With no `bus`, the trailer tells.
    public static func dualSense(_ report: [UInt8], convention: CalibrationConvention = .default,
                                 bus: PadBus? = nil) throws(CalibrationError) -> CalibrationResult {
        try check(report, ids: [0x05], bus: bus)
        return build(read(report, interleavedGyro: true), convention: convention)
    }

    /// DualShock 4: USB feature 0x02 lists gyro plus/minus per axis; Bluetooth feature 0x05 lists all plus then all minus.
    public static func dualShock4(_ report: [UInt8], convention: CalibrationConvention = .default) throws(CalibrationError) -> CalibrationResult {
        try check(report, ids: [0x02, 0x05], bus: report.first == 0x05 ? .bluetooth : .usb)
        return build(read(report, interleavedGyro: report[0] == 0x02), convention: convention)
    }

    /// How a feature report was read: over Bluetooth it needs a valid CRC32 trailer, over USB none is
    /// checked, and with no bus given a report whose CRC verifies is taken as Bluetooth, one whose
    /// trailer is zero as USB, and anything else is refused.
    private static func check(_ report: [UInt8], ids: [UInt8], bus: PadBus?) throws(CalibrationError) {
        guard report.count >= minimumLength else { throw .tooShort(got: report.count, need: minimumLength) }
        guard ids.contains(report[0]) else { throw .unexpectedReportID(report[0], expected: ids) }
        switch bus {
        case .usb: break
        case .bluetooth:
            guard BluetoothCRC.verify(seed: .feature, report: report) else { throw .badChecksum(reportID: report[0]) }
        case nil:
            // A report cut short of the trailer cannot carry a CRC: only a full one is checked.
            let trailerIsZero = report.count < fullLength || report.suffix(BluetoothCRC.trailerSize).allSatisfy { $0 == 0 }
            guard trailerIsZero || BluetoothCRC.verify(seed: .feature, report: report) else {
                throw .unverifiableTrailer(reportID: report[0])
            }
        }
    }

    private static func read(_ r: [UInt8], interleavedGyro: Bool) -> RawBlob {
        func s16(_ o: Int) -> Int16 { Int16(bitPattern: UInt16(r[o]) | UInt16(r[o + 1]) << 8) }
        let plus, minus: (Int16, Int16, Int16)
        if interleavedGyro {
            plus = (s16(7), s16(11), s16(15)); minus = (s16(9), s16(13), s16(17))
        } else {
            plus = (s16(7), s16(9), s16(11)); minus = (s16(13), s16(15), s16(17))
        }
        return RawBlob(gyroBias: (s16(1), s16(3), s16(5)), gyroPlus: plus, gyroMinus: minus,
                       speedPlus: s16(19), speedMinus: s16(21),
                       accelPlus: (s16(23), s16(27), s16(31)), accelMinus: (s16(25), s16(29), s16(33)))
    }

    private static func build(_ blob: RawBlob, convention: CalibrationConvention) -> CalibrationResult {
        var warnings: [String] = []
        let speed2x = (Int32(blob.speedPlus) + Int32(blob.speedMinus)) * MotionCalibration.gyroResolutionPerDegreePerSecond

        func gyroAxis(_ name: String, bias: Int16, plus: Int16, minus: Int16) -> AxisCalibration {
            let b = Int32(bias), p = Int32(plus), m = Int32(minus)
            let axis: AxisCalibration
            switch convention {
            case .kernel: axis = AxisCalibration(bias: 0, numerator: speed2x, denominator: abs(p - b) + abs(m - b))
            case .legacy: axis = AxisCalibration(bias: b, numerator: speed2x, denominator: p - m)
            }
            return usable(axis, sensor: "gyro", axis: name, nominal: MotionCalibration.nominalGyro)
        }
        func accelAxis(_ name: String, plus: Int16, minus: Int16) -> AxisCalibration {
            let range2g = Int32(plus) - Int32(minus)
            let axis = AxisCalibration(bias: Int32(plus) - range2g / 2, numerator: 2 * MotionCalibration.accelResolutionPerG, denominator: range2g)
            return usable(axis, sensor: "accel", axis: name, nominal: MotionCalibration.nominalAccel)
        }
        /// The blob's axis, or the nominal one (with a warning) when its scale is unusable or absurd.
        func usable(_ axis: AxisCalibration, sensor: String, axis name: String, nominal: AxisCalibration) -> AxisCalibration {
            guard axis.denominator > 0, axis.numerator > 0 else {
                warnings.append("\(sensor) \(name): unusable calibration (numerator \(axis.numerator), denominator \(axis.denominator)); using nominal scale")
                return nominal
            }
            guard axis.isPlausible(nominal: nominal) else {
                let ratio = Double(axis.numerator) * Double(nominal.denominator) / (Double(axis.denominator) * Double(nominal.numerator))
                warnings.append("\(sensor) \(name): calibration scale is \(Self.formatRatio(ratio))× the nominal one (numerator \(axis.numerator), denominator \(axis.denominator)), more than \(AxisCalibration.plausibleScaleFactor)× off; using nominal scale (re-read the calibration report, or the pad's calibration is broken)")
                return nominal
            }
            return axis
        }
        let gyro = AxisTriple(x: gyroAxis("x", bias: blob.gyroBias.0, plus: blob.gyroPlus.0, minus: blob.gyroMinus.0),
                              y: gyroAxis("y", bias: blob.gyroBias.1, plus: blob.gyroPlus.1, minus: blob.gyroMinus.1),
                              z: gyroAxis("z", bias: blob.gyroBias.2, plus: blob.gyroPlus.2, minus: blob.gyroMinus.2))
        let accel = AxisTriple(x: accelAxis("x", plus: blob.accelPlus.0, minus: blob.accelMinus.0),
                               y: accelAxis("y", plus: blob.accelPlus.1, minus: blob.accelMinus.1),
                               z: accelAxis("z", plus: blob.accelPlus.2, minus: blob.accelMinus.2))
        return CalibrationResult(calibration: MotionCalibration(gyro: gyro, accel: accel, convention: convention), warnings: warnings)
    }

    /// Three significant digits: enough to tell 2× from 500000×.
    static func formatRatio(_ ratio: Double) -> String {
        if ratio >= 100 { return String(Int(ratio.rounded())) }
        return String((ratio * 1000).rounded() / 1000)
    }

    /// `{"gyro": [{bias, numer, denom} x3], "accel": [...], "convention": "..."}` for `padgate calibrate --json`.
    public static func json(_ result: CalibrationResult) -> JSONValue {
        func axes(_ t: AxisTriple) -> JSONValue {
            .array(t.all.map { .object([("bias", .integer($0.bias)), ("numer", .integer($0.numerator)), ("denom", .integer($0.denominator))]) })
        }
        var members: [(String, JSONValue)] = [("gyro", axes(result.calibration.gyro)), ("accel", axes(result.calibration.accel)),
                                              ("convention", .string(result.calibration.convention.rawValue))]
        if !result.warnings.isEmpty { members.append(("warnings", .array(result.warnings.map(JSONValue.string)))) }
        return .object(members)
    }
}
