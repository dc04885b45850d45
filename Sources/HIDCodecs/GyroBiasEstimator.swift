/// Continuous gyro calibration: the gyro's bias estimated whenever the pad rests, and a correction
/// that follows it (docs/calibration.md, "Continuous calibration"). Pure and allocation-free: one
/// value type updated in place per sample, the arithmetic in `SIMD3<Double>`.
///
/// The samples are split into blocks of `blockSeconds` of sensor time. A block is still when
///  - its gyro and accelerometer standard deviations are within `noiseFactor` of the pad's own
///    noise floor (the quietest recent blocks, measured per axis), but the gyro is not frozen;
///  - its gyro mean is within the gate of the current estimate (`gateFloor`, or `gateFactor` times
///    the estimate's uncertainty, which grows while the pad is not seen resting); and
///  - it agrees with the blocks before it: the same gyro mean within the noise, gravity where it
///    was (a pitch or roll turn moves gravity; a yaw turn only the gyro, which the gate catches).
/// Consecutive still blocks make a rest window. Once a window has lasted `minimumRestSeconds`, the
/// estimate is its mean gyro, less its newest block (which may hold the start of the next movement),
/// and the applied correction eases towards the estimate with time constant `easeSeconds`.
public struct GyroBiasEstimator: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Seconds of sensor time per block: the unit of every stillness decision.
        public var blockSeconds = 0.25
        /// A block needs this many samples to be judged (fewer: a gap, the pad stalled).
        public var minimumBlockSamples = 5
        /// A rest window corrects once it has lasted this long.
        public var minimumRestSeconds = 1.0
        /// The applied correction follows the estimate with this time constant (seconds).
        public var easeSeconds = 0.5
        /// Gyro noise floor (deg/s std dev per axis) assumed until the pad shows its own. The floor
        /// follows the median of the blocks' standard deviations (up or down by `floorStep` a block).
        public var defaultGyroNoise = 0.1
        /// A block quieter than this on any axis is a frozen or emulated sensor, never rest (real
        /// gyros show a few LSB of noise).
        public var minimumGyroNoise = 0.01
        /// A block is calm when each axis's std dev is at most `noiseFactor` floors, and never above
        /// `gyroStillLimit`: a pad on a desk reads 0.04-0.3 deg/s, one held in a hand 0.5 and up.
        public var gyroStillLimit = 0.4
        /// The same for the accelerometer (g).
        public var defaultAccelNoise = 0.003
        public var minimumAccelNoise = 0.0003
        public var accelStillLimit = 0.015
        public var noiseFactor = 3.0
        public var floorStep = 0.04
        /// Within a window, each block's gyro mean agrees with the window's within `gyroConsistency`
        /// deg/s (or `consistencySigmas` standard errors of a block mean, if more): a turn starting or
        /// stopping. Real pads wander more than white noise would (a DualSense's 0.25 s means spread
        /// two to three times wider, up to 0.2 deg/s on one axis), so the bound is wide; the gate
        /// does the fine work once the estimate has converged. Gravity must stay within `accelDrift`
        /// g (or as many standard errors) of where the window found it: a pitch or roll turn moves it.
        public var consistencySigmas = 4.0
        public var gyroConsistency = 0.15
        public var accelDrift = 0.002
        /// The gate: rest is only taken where the gyro reads within max(gateFloor, gateFactor ×
        /// uncertainty) deg/s of the estimate, never beyond `maximumBias`.
        public var gateFloor = 0.25
        public var gateFactor = 3.0
        public var maximumBias = 5.0
        /// How fast the uncertainty grows while the pad is not seen resting (deg/s per second:
        /// 0.05 deg/s a minute, about twice a warming DualSense's drift).
        public var driftPerSecond = 0.05 / 60
        /// Uncertainty of the starting value: none (0 deg/s), or the bias `padgate calibrate` stored.
        public var unknownBiasUncertainty = 1.5
        public var storedBiasUncertainty = 0.15
        /// Sample intervals come from the sensor clock; one outside (0, this] (a wrap, a gap, a pad
        /// without a clock) counts as the previous interval, or `defaultSampleInterval` before any.
        public var maximumSampleInterval = 0.05
        public var defaultSampleInterval = 0.004

        public init() {}
    }

    /// A rest window: the span of sensor time the pad lay still, what the gyro read (its bias)
    /// and what the accelerometer read (gravity).
    public struct RestWindow: Equatable, Sendable {
        /// Seconds since the estimator's first sample.
        public var start: Double
        public var end: Double
        public var samples: Int
        /// Mean over the window's blocks, deg/s: the bias it measured.
        public var gyroMean: MotionVector
        /// Pooled within-block standard deviation per axis, deg/s.
        public var gyroNoise: MotionVector
        /// Mean accelerometer reading, g.
        public var accelMean: MotionVector
        public var duration: Double { end - start }
        public var gravity: Double { accelMean.magnitude }

        public init(start: Double, end: Double, samples: Int, gyroMean: MotionVector, gyroNoise: MotionVector, accelMean: MotionVector) {
            self.start = start; self.end = end; self.samples = samples
            self.gyroMean = gyroMean; self.gyroNoise = gyroNoise; self.accelMean = accelMean
        }
    }

    public let configuration: Configuration
    /// deg/s: what is subtracted from the gyro now (eases towards `estimate`).
    public private(set) var applied: SIMD3<Double>
    /// deg/s: the bias the last rest window measured (or the starting value).
    public private(set) var target: SIMD3<Double>
    /// deg/s: how far `target` may be from the truth (one standard error, plus drift since the last rest).
    public private(set) var uncertainty: Double
    /// Per-axis noise floors, deg/s and g.
    public private(set) var gyroNoiseFloor: SIMD3<Double>
    public private(set) var accelNoiseFloor: SIMD3<Double>
    /// Seconds of samples seen.
    public private(set) var time = 0.0
    /// True while a rest window long enough to correct is open.
    public private(set) var isResting = false
    /// Rest windows that corrected, so far (the open one included).
    public private(set) var restWindows = 0
    /// Why blocks were not rest, counted: for `calibrate FILE.hid` and tests.
    public struct Refusals: Equatable, Sendable {
        /// The gyro repeated one value (frozen or emulated sensor).
        public var frozen = 0
        /// Gyro or accelerometer noisier than the pad's floor allows (held, carried, knocked).
        public var noisy = 0
        /// The gyro read further from the estimate than the gate (a steady turn, or a bias jump).
        public var outsideGate = 0
        /// Within a window, the gyro's mean moved (a turn starting) or gravity moved (a pitch or roll turn).
        public var gyroShifted = 0
        public var gravityMoved = 0
        public init() {}
    }
    public private(set) var refusals = Refusals()

    private var interval: Double
    private var lastMicros: UInt32?
    private var block = Block()
    private var window: Window?

    /// Sums over the samples of one block, taken relative to its first sample (so the variance
    /// does not lose precision to a large mean).
    struct Block {
        var start = 0.0
        var count = 0
        var gyroReference = SIMD3<Double>(), accelReference = SIMD3<Double>()
        var gyroSum = SIMD3<Double>(), gyroSquares = SIMD3<Double>()
        var accelSum = SIMD3<Double>(), accelSquares = SIMD3<Double>()

        mutating func add(_ g: SIMD3<Double>, _ a: SIMD3<Double>) {
            if count == 0 { gyroReference = g; accelReference = a }
            count += 1
            let dg = g - gyroReference, da = a - accelReference
            gyroSum += dg; gyroSquares += dg * dg
            accelSum += da; accelSquares += da * da
        }

        var n: Double { Double(count) }
        var gyroMean: SIMD3<Double> { gyroReference + gyroSum / n }
        var accelMean: SIMD3<Double> { accelReference + accelSum / n }
        var gyroVariance: SIMD3<Double> { Self.variance(gyroSum, gyroSquares, n) }
        var accelVariance: SIMD3<Double> { Self.variance(accelSum, accelSquares, n) }
        static func variance(_ sum: SIMD3<Double>, _ squares: SIMD3<Double>, _ n: Double) -> SIMD3<Double> {
            guard n > 1 else { return .zero }
            return ((squares - sum * sum / n) / (n - 1)).replacing(with: .zero, where: squares - sum * sum / n .< .zero)
        }
    }

    /// Totals of a run of still blocks.
    struct Totals {
        var blocks = 0, samples = 0
        var gyroSum = SIMD3<Double>(), accelSum = SIMD3<Double>(), gyroVarianceSum = SIMD3<Double>()
        mutating func add(_ b: Block) {
            blocks += 1; samples += b.count
            gyroSum += b.gyroMean * b.n; accelSum += b.accelMean * b.n
            gyroVarianceSum += b.gyroVariance * (b.n - 1)
        }
        mutating func add(_ t: Totals) {
            blocks += t.blocks; samples += t.samples
            gyroSum += t.gyroSum; accelSum += t.accelSum; gyroVarianceSum += t.gyroVarianceSum
        }
        var gyroMean: SIMD3<Double> { gyroSum / Double(samples) }
        var accelMean: SIMD3<Double> { accelSum / Double(samples) }
        var gyroNoise: SIMD3<Double> { (gyroVarianceSum / Double(max(1, samples - blocks))).squareRoot() }
    }

    /// The open rest window: its blocks but the newest (committed), and the newest (pending, used
    /// once a block after it is still too).
    struct Window {
        var start: Double
        var end: Double
        var accelReference: SIMD3<Double>
        /// Lasted `minimumRestSeconds`: it set the estimate.
        var corrected = false
        var committed = Totals()
        var pending = Totals()
        var all: Totals { var t = committed; t.add(pending); return t }
    }

    /// Starts from `bias` (deg/s, e.g. what `padgate calibrate` stored), or from 0 when there is
    /// none; `noise` seeds the gyro noise floor (the stored measurement's std dev).
    public init(configuration: Configuration = Configuration(), bias: MotionVector? = nil, noise: MotionVector? = nil) {
        self.configuration = configuration
        let start = bias.map { SIMD3($0.x, $0.y, $0.z) } ?? .zero
        applied = start
        target = start
        uncertainty = bias == nil ? configuration.unknownBiasUncertainty : configuration.storedBiasUncertainty
        var floor = SIMD3(repeating: configuration.defaultGyroNoise)
        if let noise, min(noise.x, noise.y, noise.z) >= 2 * configuration.minimumGyroNoise {
            floor = SIMD3(noise.x, noise.y, noise.z).clamped(lowerBound: SIMD3(repeating: configuration.minimumGyroNoise),
                                                             upperBound: SIMD3(repeating: configuration.gyroStillLimit / configuration.noiseFactor))
        }
        gyroNoiseFloor = floor
        accelNoiseFloor = SIMD3(repeating: configuration.defaultAccelNoise)
        interval = configuration.defaultSampleInterval
    }

    public var correction: MotionVector { MotionVector(x: applied.x, y: applied.y, z: applied.z) }
    public var estimate: MotionVector { MotionVector(x: target.x, y: target.y, z: target.z) }
    /// deg/s: how far from the estimate a block's gyro mean may be and still count as rest.
    public var gate: Double {
        min(configuration.maximumBias, max(configuration.gateFloor, configuration.gateFactor * uncertainty))
    }

    /// One sample stamped by the pad's clock in microseconds (wrapping: the interval is the
    /// difference from the previous stamp, an implausible one replaced by the previous interval).
    /// Returns a rest window that closed with this sample.
    @inlinable @inline(__always)
    public mutating func add(gyro: SIMD3<Double>, accel: SIMD3<Double>, timestampMicros: UInt32) -> RestWindow? {
        add(gyro: gyro, accel: accel, interval: interval(to: timestampMicros))
    }

    @usableFromInline
    mutating func interval(to micros: UInt32) -> Double {
        defer { lastMicros = micros }
        guard let last = lastMicros else { return interval }
        let dt = Double(micros &- last) * 1e-6
        if dt > 0 && dt <= configuration.maximumSampleInterval { interval = dt }
        return interval
    }

    /// One sample (gyro in deg/s, accelerometer in g), `interval` seconds after the previous one.
    /// Returns a rest window that closed with this sample.
    public mutating func add(gyro: SIMD3<Double>, accel: SIMD3<Double>, interval dt: Double) -> RestWindow? {
        time += dt
        let gap = target - applied
        if gap != .zero {
            applied += gap * (dt / (configuration.easeSeconds + dt))
            if ((target - applied) * (target - applied)).sum() < 1e-18 { applied = target }
        }
        if block.count == 0 { block.start = time - dt }
        block.add(gyro, accel)
        guard time - block.start >= configuration.blockSeconds - 1e-9 else { return nil }
        defer { block = Block() }
        return close(block)
    }

    /// The gyro sample less the correction (deg/s).
    @inlinable
    public func corrected(_ gyro: SIMD3<Double>) -> SIMD3<Double> { gyro - applied }

    /// Ends the input (a recording's end): the open rest window, if it lasted long enough.
    public mutating func finish() -> RestWindow? {
        if block.count >= configuration.minimumBlockSamples {
            let closed = close(block)
            block = Block()
            if let closed { return closed }
        }
        defer { window = nil; isResting = false }
        return window.flatMap(report)
    }

    private func report(_ w: Window) -> RestWindow? {
        guard w.corrected else { return nil }
        let t = w.all
        return RestWindow(start: w.start, end: w.end, samples: t.samples, gyroMean: MotionVector(t.gyroMean),
                          gyroNoise: MotionVector(t.gyroNoise), accelMean: MotionVector(t.accelMean))
    }

    /// Judges a finished block; returns the rest window it ended, if one that corrected did.
    private mutating func close(_ b: Block) -> RestWindow? {
        let c = configuration
        let end = time
        guard b.count >= c.minimumBlockSamples else { return endWindow(at: end) }
        let n = b.n
        let gyroMean = b.gyroMean, accelMean = b.accelMean
        let gyroStd = b.gyroVariance.squareRoot(), accelStd = b.accelVariance.squareRoot()
        let frozen = any(gyroStd .< SIMD3(repeating: c.minimumGyroNoise))
        let gyroLimit = pointwiseMin(c.noiseFactor * gyroNoiseFloor, SIMD3(repeating: c.gyroStillLimit))
        let accelLimit = pointwiseMin(c.noiseFactor * accelNoiseFloor, SIMD3(repeating: c.accelStillLimit))
        let calm = all(gyroStd .<= gyroLimit) && all(accelStd .<= accelLimit)
        let near = all(magnitude(gyroMean - target) .<= SIMD3(repeating: gate))
        if !frozen {
            // The floors follow the median block: a step up when this block is noisier, down when quieter.
            gyroNoiseFloor = Self.follow(gyroNoiseFloor, gyroStd, step: c.floorStep, c.minimumGyroNoise...(c.gyroStillLimit / c.noiseFactor))
            accelNoiseFloor = Self.follow(accelNoiseFloor, accelStd, step: c.floorStep, c.minimumAccelNoise...(c.accelStillLimit / c.noiseFactor))
        }
        if frozen { refusals.frozen += 1 } else if !calm { refusals.noisy += 1 } else if !near { refusals.outsideGate += 1 }
        var ended: RestWindow?
        if !frozen && calm && near {
            let standardError = c.consistencySigmas * (2 / n).squareRoot()
            if var w = window {
                let gyroTolerance = pointwiseMax(SIMD3(repeating: c.gyroConsistency), standardError * gyroNoiseFloor)
                let accelTolerance = pointwiseMax(SIMD3(repeating: c.accelDrift), standardError * accelNoiseFloor)
                let agrees = all(magnitude(gyroMean - w.all.gyroMean) .<= gyroTolerance)
                    && all(magnitude(accelMean - w.accelReference) .<= accelTolerance)
                if agrees {
                    w.committed.add(w.pending)
                    w.pending = Totals()
                    w.pending.add(b)
                    w.end = end
                    window = w
                } else {
                    if all(magnitude(gyroMean - w.all.gyroMean) .<= gyroTolerance) { refusals.gravityMoved += 1 } else { refusals.gyroShifted += 1 }
                    ended = endWindow(at: b.start)
                }
            }
            if window == nil {
                var w = Window(start: b.start, end: end, accelReference: accelMean)
                w.pending.add(b)
                window = w
            }
        } else {
            ended = endWindow(at: b.start)
        }
        if var w = window, w.end - w.start >= c.minimumRestSeconds - 1e-9, w.committed.samples > 0 {
            if !w.corrected { restWindows += 1; w.corrected = true; window = w }
            isResting = true
            target = w.committed.gyroMean
            let noise = w.committed.gyroNoise.max()
            uncertainty = noise / Double(w.committed.samples).squareRoot()
        } else {
            uncertainty = min(uncertainty + c.driftPerSecond * (end - b.start), c.maximumBias)
        }
        return ended
    }

    static func follow(_ floor: SIMD3<Double>, _ value: SIMD3<Double>, step: Double, _ bounds: ClosedRange<Double>) -> SIMD3<Double> {
        let up = floor * (1 + step), down = floor * (1 - step)
        return up.replacing(with: down, where: value .< floor)
            .clamped(lowerBound: SIMD3(repeating: bounds.lowerBound), upperBound: SIMD3(repeating: bounds.upperBound))
    }

    private mutating func endWindow(at end: Double) -> RestWindow? {
        defer { window = nil; isResting = false }
        guard var w = window, w.corrected else { return nil }
        // Its newest block never corrected: the movement may have begun in it.
        w.end = max(w.start, min(w.end, end) - Double(w.pending.blocks) * configuration.blockSeconds)
        w.pending = Totals()
        return report(w)
    }
}

/// Per-axis absolute value.
@inline(__always) private func magnitude(_ v: SIMD3<Double>) -> SIMD3<Double> { pointwiseMax(v, -v) }

extension MotionVector {
    public init(_ v: SIMD3<Double>) { self.init(x: v.x, y: v.y, z: v.z) }
    /// As a SIMD vector, for the estimator's arithmetic.
    public var simd: SIMD3<Double> { SIMD3(x, y, z) }
}
