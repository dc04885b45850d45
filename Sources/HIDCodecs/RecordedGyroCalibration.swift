/// `padgate calibrate FILE.hid`: the continuous calibration `forward` runs (`GyroBiasEstimator`),
/// over a hid-recorder recording of a DualSense, Edge, DualShock 4 or Steam Deck. Each motion report is
/// decoded by the pad's typed decoder, calibrated as `forward` calibrates it (the factory
/// calibration in the kernel's arithmetic, deg/s and g) and stamped by the pad's own sensor clock.
public struct RecordedGyroCalibration: Sendable {
    /// One motion sample as the estimator saw it, for plots.
    public struct Point: Sendable, Equatable {
        /// Seconds since the first motion sample (sensor clock).
        public var time: Double
        /// deg/s, calibrated, before the correction.
        public var gyro: MotionVector
        /// deg/s: the correction applied to this sample.
        public var correction: MotionVector
        public var resting: Bool

        public init(time: Double, gyro: MotionVector, correction: MotionVector, resting: Bool) {
            self.time = time; self.gyro = gyro; self.correction = correction; self.resting = resting
        }
    }

    public var kind: PadKind
    public var deviceName: String?
    public var calibration: MotionCalibration
    /// Motion samples (reports with a new sensor timestamp).
    public var samples = 0
    /// Sensor time covered, seconds.
    public var seconds = 0.0
    public var restWindows: [GyroBiasEstimator.RestWindow] = []
    /// deg/s: the estimator's bias at the end (what `forward` would subtract next), its uncertainty
    /// (one standard error), and the noise floors it measured.
    public var estimate = MotionVector.zero
    public var uncertainty = 0.0
    public var gyroNoiseFloor = MotionVector.zero
    public var accelNoiseFloor = MotionVector.zero
    /// Why blocks of samples were not rest.
    public var refusals = GyroBiasEstimator.Refusals()
    /// Reports the decoder refused, and reports without motion.
    public var rejectedReports = 0
    /// Every sample when `keepPoints` (for plots); empty otherwise.
    public var points: [Point] = []

    public var rate: Double { seconds > 0 ? Double(samples) / seconds : 0 }

    /// Runs the estimator over the recording's first pad whose kind is a PlayStation pad (by its
    /// ids, else by its name). `calibration` nil: the family's default (the nominal scale), as the
    /// pad would be forwarded without a readable feature report.
    public init(recording: HIDRecording, codecs: InputCodecCatalogue, calibration: MotionCalibration? = nil, bias: MotionVector? = nil,
                configuration: GyroBiasEstimator.Configuration = .init(), keepPoints: Bool = false) throws(RecordedCalibrationError) {
        guard let (device, kind) = Self.pad(in: recording, codecs: codecs), let codec = codecs(kind, nil) else { throw .noPad }
        var decoder = ControllerInputDecoder(codec)
        self.kind = kind
        deviceName = device.name
        self.calibration = calibration ?? codec.nominalCalibration
        var estimator = GyroBiasEstimator(configuration: configuration, bias: bias)
        var state = GamepadState()
        var lastStamp: UInt32?
        let dps = Double(MotionCalibration.gyroResolutionPerDegreePerSecond), g = Double(MotionCalibration.accelResolutionPerG)
        let cal = self.calibration
        for event in recording.events where event.deviceIndex == device.index {
            do throws(InputReportError) { try decoder.decode(event.data, into: &state) } catch { rejectedReports += 1; continue }
            guard state.hasMotion else { rejectedReports += 1; continue }
            let stamp = state.sensorMicros
            // A repeated report is not a new reading (as forward's DecodedReportInput decides).
            guard stamp != lastStamp else { continue }
            lastStamp = stamp
            let m = state.motion.first
            let gyro = SIMD3(Double(cal.gyro.x.apply(m.gyro.x)), Double(cal.gyro.y.apply(m.gyro.y)), Double(cal.gyro.z.apply(m.gyro.z))) / dps
            let accel = SIMD3(Double(cal.accel.x.apply(m.accel.x)), Double(cal.accel.y.apply(m.accel.y)), Double(cal.accel.z.apply(m.accel.z))) / g
            let applied = estimator.correction
            if let window = estimator.add(gyro: gyro, accel: accel, timestampMicros: stamp) { restWindows.append(window) }
            samples += 1
            if keepPoints {
                points.append(Point(time: estimator.time, gyro: MotionVector(gyro), correction: applied, resting: estimator.isResting))
            }
        }
        if let window = estimator.finish() { restWindows.append(window) }
        guard samples > 0 else { throw .noMotion(kind) }
        seconds = estimator.time
        estimate = estimator.estimate
        uncertainty = estimator.uncertainty
        gyroNoiseFloor = MotionVector(estimator.gyroNoiseFloor)
        accelNoiseFloor = MotionVector(estimator.accelNoiseFloor)
        refusals = estimator.refusals
    }

    /// The recording's first pad whose codec reads motion on the pad's own clock (a PlayStation
    /// pad, a Steam Deck), by its ids, else by the longest kind's name its name holds ("DualSense
    /// Edge" before "DualSense"); and its kind.
    public static func pad(in recording: HIDRecording, codecs: InputCodecCatalogue) -> (RecordedDevice, PadKind)? {
        for device in recording.devices {
            if let vid = device.vendorID, let pid = device.productID, case let kind = PadKind(vendorID: vid, productID: pid),
               codecs(kind, nil)?.readsMotionWithAClock == true {
                return (device, kind)
            }
            let name = device.name ?? ""
            let named = PadKind.allCases.filter { name.contains($0.displayName) && codecs($0, nil)?.readsMotionWithAClock == true }
            if let kind = named.max(by: { $0.displayName.count < $1.displayName.count }) { return (device, kind) }
        }
        return nil
    }

    /// What the rest windows say about the accelerometer: a warning for each whose gravity is
    /// further than `StillnessMeasurement.gravityTolerance` from 1 g.
    public var gravityWarnings: [String] {
        restWindows.compactMap { StillnessMeasurement.gravityWarning($0.gravity, at: " from \(fixed($0.start, 2)) s") }
    }
}

public enum RecordedCalibrationError: Error, Equatable, Sendable, CustomStringConvertible {
    case noPad
    case noMotion(PadKind)

    public var description: String {
        switch self {
        case .noPad: return "the recording has no DualSense, DualSense Edge or DualShock 4 (by its ids or name)"
        case .noMotion(let kind): return "the recording's \(kind.displayName) sent no report with motion (a DualSense over Bluetooth sends motion only once switched to its full 0x31 reports)"
        }
    }
}

/// A number with `places` decimals, without Foundation.
func fixed(_ value: Double, _ places: Int) -> String {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale), fraction = Int(scaled.truncatingRemainder(dividingBy: scale))
    let sign = value < 0 && scaled > 0 ? "-" : ""
    guard places > 0 else { return sign + String(whole) }
    let digits = String(fraction)
    return sign + "\(whole)." + String(repeating: "0", count: places - digits.count) + digits
}
