import HIDCodecs
import WireProtocol

/// How `forward` corrects a pad's gyro bias (`--gyro-calibration`, docs/calibration.md).
public enum GyroCalibrationMode: String, Sendable, CaseIterable {
    /// Estimated whenever the pad rests, starting from the stored bias (the default).
    case continuous
    /// Only the bias `padgate calibrate` stored for the pad's serial, if any.
    case stored
    /// None: the gyro as the pad's factory calibration gives it.
    case off
}

/// The gyro correction one pad source applies to each motion sample before it goes on the wire,
/// in deg/s. The host's pad turns the corrected values back into raw counts through the pad's
/// calibration, so games that read raw reports (SDL's HIDAPI) and games that read evdev both see
/// the corrected gyro. Touched by the forwarding thread only; allocates nothing per sample.
public struct GyroCorrection: Sendable {
    public let mode: GyroCalibrationMode
    /// The bias `padgate calibrate` stored (the starting value in continuous mode).
    public let stored: MotionCorrection?
    /// The continuous estimate (idle in the other modes).
    public private(set) var estimator: GyroBiasEstimator
    private let storedBias: SIMD3<Float>

    public init(mode: GyroCalibrationMode, stored: MotionCorrection?) {
        self.mode = mode
        self.stored = mode == .off ? nil : stored
        estimator = GyroBiasEstimator(bias: self.stored?.gyroBias, noise: self.stored?.gyroNoise)
        let b = self.stored?.gyroBias ?? .zero
        storedBias = SIMD3(Float(b.x), Float(b.y), Float(b.z))
    }

    /// What is subtracted now, deg/s.
    public var current: MotionVector {
        switch mode {
        case .continuous: estimator.correction
        case .stored: stored?.gyroBias ?? .zero
        case .off: .zero
        }
    }

    @inline(__always)
    public mutating func correct(_ sample: inout WireMotionSample) {
        switch mode {
        case .off:
            return
        case .stored:
            guard stored != nil else { return }
            sample.gyroX -= storedBias.x; sample.gyroY -= storedBias.y; sample.gyroZ -= storedBias.z
        case .continuous:
            _ = estimator.add(gyro: SIMD3(Double(sample.gyroX), Double(sample.gyroY), Double(sample.gyroZ)),
                              accel: SIMD3(Double(sample.accelX), Double(sample.accelY), Double(sample.accelZ)),
                              timestampMicros: sample.timestampMicros)
            let c = estimator.applied
            sample.gyroX -= Float(c.x); sample.gyroY -= Float(c.y); sample.gyroZ -= Float(c.z)
        }
    }
}
