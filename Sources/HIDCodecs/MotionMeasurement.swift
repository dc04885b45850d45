/// A motion reading in physical units: gyro in deg/s or accelerometer in g, per axis.
/// Encodes as `[x, y, z]`, the shape of the correction files and `padgate calibrate --json`.
public struct MotionVector: Hashable, Sendable, Codable {
    public var x: Double
    public var y: Double
    public var z: Double

    public init(x: Double, y: Double, z: Double) { self.x = x; self.y = y; self.z = z }
    public static let zero = MotionVector(x: 0, y: 0, z: 0)

    public var all: [Double] { [x, y, z] }
    public var magnitude: Double { (x * x + y * y + z * z).squareRoot() }

    public static func - (a: MotionVector, b: MotionVector) -> MotionVector {
        MotionVector(x: a.x - b.x, y: a.y - b.y, z: a.z - b.z)
    }

    public init(from decoder: Decoder) throws {
        var c = try decoder.unkeyedContainer()
        x = try c.decode(Double.self); y = try c.decode(Double.self); z = try c.decode(Double.self)
        guard c.isAtEnd else { throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected [x, y, z]") }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(x); try c.encode(y); try c.encode(z)
    }
}

/// Mean, variance and range of a stream of values in one pass without keeping them (Welford's
/// update: stable where the naive sum of squares loses precision to a large mean).
public struct RunningStatistics: Hashable, Sendable {
    public private(set) var count = 0
    public private(set) var mean = 0.0
    public private(set) var minimum = Double.infinity
    public private(set) var maximum = -Double.infinity
    private var sumOfSquaredDeviations = 0.0

    public init() {}

    public mutating func add(_ value: Double) {
        count += 1
        let delta = value - mean
        mean += delta / Double(count)
        sumOfSquaredDeviations += delta * (value - mean)
        minimum = Swift.min(minimum, value)
        maximum = Swift.max(maximum, value)
    }

    /// Sample variance (n − 1); 0 until there are two values.
    public var variance: Double { count > 1 ? sumOfSquaredDeviations / Double(count - 1) : 0 }
    public var standardDeviation: Double { variance.squareRoot() }
    public var range: Double { count > 0 ? maximum - minimum : 0 }
}

/// Per-axis statistics of a three-axis sensor.
public struct MotionStatistics: Hashable, Sendable {
    public private(set) var axes = [RunningStatistics](repeating: RunningStatistics(), count: 3)
    public init() {}

    public mutating func add(_ v: MotionVector) {
        axes[0].add(v.x); axes[1].add(v.y); axes[2].add(v.z)
    }

    public var mean: MotionVector { vector(\.mean) }
    public var standardDeviation: MotionVector { vector(\.standardDeviation) }
    public var range: MotionVector { vector(\.range) }
    private func vector(_ value: KeyPath<RunningStatistics, Double>) -> MotionVector {
        MotionVector(x: axes[0][keyPath: value], y: axes[1][keyPath: value], z: axes[2][keyPath: value])
    }
}

/// What `padgate calibrate` measures while a pad lies still: the gyro's residual bias (what it
/// reads when nothing turns), its noise, and the accelerometer's reading of gravity. Samples are in
/// the units the kernel's evdev resolutions give (deg/s, g), the same pipeline `forward` uses.
public struct StillnessMeasurement: Sendable {
    /// Beyond these the pad was not still, or the result could not be trusted (docs/calibration.md).
    public struct Limits: Sendable, Equatable {
        /// A pad on a table reads about 0.05–0.15 deg/s of noise; held in a hand, 0.5–2.
        public var gyroNoise = 1.0
        /// Peak to peak on any gyro axis: catches a short knock that barely moves the std dev.
        public var gyroRange = 10.0
        /// Accelerometer std dev (g): the pad was carried, shaken or set down during the measurement.
        public var accelNoise = 0.05
        /// A steady reading above this is a pad turning steadily (a turntable, a vehicle) or a broken
        /// calibration, not sensor bias (real pads are within a few deg/s).
        public var gyroBias = 10.0
        /// Fewer samples than this give no useful mean (the standard error is noise / √n).
        public var minimumSamples = 30
        /// Gravity further than this from 1 g is reported as a warning; only the gyro is corrected.
        /// Calibrated pads read within about 1 % (docs/calibration.md, "The accelerometer").
        public var gravityWarning = StillnessMeasurement.gravityTolerance
        public init() {}
    }

    public private(set) var gyro = MotionStatistics()
    public private(set) var accel = MotionStatistics()
    public let limits: Limits

    public init(limits: Limits = Limits()) { self.limits = limits }

    public var samples: Int { gyro.axes[0].count }

    public mutating func add(gyro g: MotionVector, accel a: MotionVector) {
        gyro.add(g)
        accel.add(a)
    }

    /// Why the samples so far show a pad that moved, if they do. Cheap enough to call per sample,
    /// so the measurement can stop as soon as the pad is picked up.
    public var movement: StillnessError? {
        for (axis, stats) in zip(Self.axisNames, gyro.axes) {
            if stats.range > limits.gyroRange { return .moved("gyro \(axis) swung over \(format(stats.range)) deg/s (limit \(format(limits.gyroRange)))") }
        }
        // Spreads need a few samples before they mean anything.
        guard samples >= 10 else { return nil }
        for (axis, stats) in zip(Self.axisNames, gyro.axes) where stats.standardDeviation > limits.gyroNoise {
            return .moved("gyro \(axis) varies by \(format(stats.standardDeviation)) deg/s (std dev; limit \(format(limits.gyroNoise)))")
        }
        for (axis, stats) in zip(Self.axisNames, accel.axes) where stats.standardDeviation > limits.accelNoise {
            return .moved("accelerometer \(axis) varies by \(format(stats.standardDeviation)) g (std dev; limit \(format(limits.accelNoise)))")
        }
        return nil
    }

    /// The measurement, or why it cannot be used.
    public func result() throws(StillnessError) -> StillnessResult {
        guard samples >= limits.minimumSamples else { throw .tooFewSamples(got: samples, need: limits.minimumSamples) }
        if let movement { throw movement }
        let bias = gyro.mean
        for (axis, value) in zip(Self.axisNames, bias.all) where abs(value) > limits.gyroBias {
            throw .implausibleBias("gyro \(axis) reads a steady \(format(value)) deg/s (limit ±\(format(limits.gyroBias)))")
        }
        var warnings: [String] = []
        if let warning = Self.gravityWarning(accel.mean.magnitude, tolerance: limits.gravityWarning) { warnings.append(warning) }
        return StillnessResult(samples: samples, gyroBias: bias, gyroNoise: gyro.standardDeviation,
                               accelMean: accel.mean, accelNoise: accel.standardDeviation, warnings: warnings)
    }

    static let axisNames = ["x", "y", "z"]

    /// How far from 1 g gravity may read at rest before the accelerometer's factory calibration is
    /// reported as off (3 %: the real pads in the fixtures read 1.1 % and 0.25 % low through their
    /// own calibration; the nominal scale alone reads 2.5 % high).
    public static let gravityTolerance = 0.03

    /// The warning for gravity read at rest, if it is further than `tolerance` from 1 g.
    public static func gravityWarning(_ gravity: Double, tolerance: Double = gravityTolerance, at place: String = "") -> String? {
        let error = gravity - 1
        guard abs(error) > tolerance else { return nil }
        return "the accelerometer reads \(format(gravity)) g at rest\(place), \(fixed(abs(error) * 100, 1)) % \(error > 0 ? "above" : "below") 1 g "
            + "(tolerance \(fixed(tolerance * 100, 0)) %): its factory calibration is off (padgate corrects only the gyro)"
    }
}

public struct StillnessResult: Hashable, Sendable {
    public var samples: Int
    /// deg/s the gyro reads at rest: what `forward` subtracts.
    public var gyroBias: MotionVector
    /// Standard deviation per axis, deg/s.
    public var gyroNoise: MotionVector
    /// Gravity as the accelerometer sees it, g.
    public var accelMean: MotionVector
    public var accelNoise: MotionVector
    public var warnings: [String]

    public init(samples: Int, gyroBias: MotionVector, gyroNoise: MotionVector, accelMean: MotionVector, accelNoise: MotionVector, warnings: [String]) {
        self.samples = samples; self.gyroBias = gyroBias; self.gyroNoise = gyroNoise
        self.accelMean = accelMean; self.accelNoise = accelNoise; self.warnings = warnings
    }

    public var gravityMagnitude: Double { accelMean.magnitude }
    /// How far gravity reads from 1 g (positive: reads high).
    public var gravityError: Double { gravityMagnitude - 1 }
}

public enum StillnessError: Error, Equatable, Sendable, CustomStringConvertible {
    case moved(String)
    case tooFewSamples(got: Int, need: Int)
    case implausibleBias(String)

    public var description: String {
        switch self {
        case .moved(let detail):
            return "the pad moved (\(detail)): keep it still — lay it on a table, hands off — and run calibrate again"
        case .tooFewSamples(let got, let need):
            return "only \(got) motion samples arrived (need \(need)): measure for longer (--seconds), or check that the pad is awake and connected"
        case .implausibleBias(let detail):
            return "\(detail): that is not sensor bias; the pad is turning steadily (a turntable, a moving vehicle?) or its calibration is broken. Nothing stored"
        }
    }
}

/// A per-pad motion correction, measured by `padgate calibrate` and applied by `padgate forward`
/// to the pad with this serial. Only the gyro bias is applied: one still pose cannot tell an
/// accelerometer's offset from its scale, so gravity is recorded for reference only.
public struct MotionCorrection: Hashable, Sendable, Codable {
    public static let currentVersion = 1

    public var version = MotionCorrection.currentVersion
    public var serial: String
    /// deg/s, subtracted from every gyro sample.
    public var gyroBias: MotionVector
    public var gyroNoise: MotionVector
    public var gravity: MotionVector
    public var samples: Int
    /// ISO 8601, when it was measured (for people reading the file).
    public var measuredAt: String

    public init(serial: String, result: StillnessResult, measuredAt: String) {
        self.serial = serial
        gyroBias = result.gyroBias; gyroNoise = result.gyroNoise; gravity = result.accelMean
        samples = result.samples
        self.measuredAt = measuredAt
    }

    enum CodingKeys: String, CodingKey {
        case version, serial, samples
        case gyroBias = "gyro_bias_dps", gyroNoise = "gyro_noise_dps", gravity = "gravity_g", measuredAt = "measured_at"
    }

    /// A gyro sample in deg/s with the bias taken off.
    public func correctGyro(_ gyro: MotionVector) -> MotionVector { gyro - gyroBias }
}

private func format(_ value: Double) -> String {
    // Three decimals without Foundation's String(format:).
    let scaled = (abs(value) * 1000).rounded()
    let whole = Int(scaled / 1000), fraction = Int(scaled.truncatingRemainder(dividingBy: 1000))
    let digits = String(fraction)
    return (value < 0 && scaled > 0 ? "-" : "") + "\(whole)." + String(repeating: "0", count: 3 - digits.count) + digits
}
