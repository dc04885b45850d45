import MonotonicTime

/// Which motion samples a client sends (docs/wire.md, "Motion"). A pad streams its IMU at up to
/// 1 kHz whether or not it moves; a pad lying still would cost a datagram per report for samples
/// that say nothing new. A sample goes out at once when it differs from the last one sent by more
/// than the sensor's noise (the pad is moving: per-report delivery, no added delay), or when the
/// last one sent is `refresh` old (a still pad: about 60 datagrams a second); the rest are dropped,
/// and the host's virtual pad keeps reporting the last sample it has, as the real one would.
public struct MotionThinning: Sendable {
    public struct Policy: Sendable {
        /// Beyond these from the last sample sent, the pad is moving. A DualSense at rest shows a
        /// gyro noise of about 0.1 deg/s and an accelerometer noise of about 0.002 g (1 σ).
        public var gyroDegreesPerSecond: Float = 1.0
        public var accelG: Float = 0.02
        /// A still pad's samples go out at least this often.
        public var refresh: Duration = .milliseconds(16)
        public init() {}
    }

    public let policy: Policy
    private let refreshNanoseconds: Int64
    private var lastSent: WireMotionSample?
    private var lastSentAt = MonotonicInstant(nanoseconds: .min)

    public init(policy: Policy = Policy()) {
        self.policy = policy
        refreshNanoseconds = policy.refresh.wholeNanoseconds
    }

    /// Whether `sample`, read at `now`, is sent. `riding`: a datagram goes out anyway (the same
    /// report changed a button or a touch), so the sample costs nothing and is sent.
    public mutating func offer(_ sample: WireMotionSample, now: MonotonicInstant, riding: Bool = false) -> Bool {
        let send: Bool
        if riding { send = true } else if let last = lastSent {
            send = now.nanoseconds &- lastSentAt.nanoseconds >= refreshNanoseconds || moved(from: last, to: sample)
        } else {
            send = true
        }
        if send { lastSent = sample; lastSentAt = now }
        return send
    }

    func moved(from a: WireMotionSample, to b: WireMotionSample) -> Bool {
        let g = policy.gyroDegreesPerSecond, x = policy.accelG
        return abs(a.gyroX - b.gyroX) > g || abs(a.gyroY - b.gyroY) > g || abs(a.gyroZ - b.gyroZ) > g
            || abs(a.accelX - b.accelX) > x || abs(a.accelY - b.accelY) > x || abs(a.accelZ - b.accelZ) > x
    }
}
