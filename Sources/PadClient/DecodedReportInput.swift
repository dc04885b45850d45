import HIDCodecs
import WireProtocol

/// A pad's raw HID input reports turned into wire snapshots: the typed decoder, then the one
/// converter (`PadSnapshots`). Shared by the hidraw source and the scripted in-process pad, so
/// both go through the same code a live pad does. Nothing here allocates per report.
public struct DecodedReportInput {
    public private(set) var decoder: ControllerInputDecoder
    public private(set) var decoded = GamepadState()
    public let slot: PadSlot
    public let calibration: MotionCalibration
    /// The gyro bias `padgate calibrate` measured for this pad (deg/s), applied unless the mode is off.
    public let motionCorrection: MotionCorrection?
    /// What is taken off every gyro sample: the stored bias, or the continuous estimate (`GyroCorrection`).
    public private(set) var gyroCorrection: GyroCorrection
    public private(set) var controls: PadStateSnapshot
    public private(set) var touch: TouchSnapshot
    public private(set) var battery: BatteryReport?
    private var motion = MotionBacklog()
    private var lastSensorTime: UInt32?
    /// Reports refused by the decoder (cut short, bad CRC, unknown id): dropped, counted.
    public private(set) var rejectedReports = 0

    public init(decoder: ControllerInputDecoder, slot: PadSlot, calibration: MotionCalibration, motionCorrection: MotionCorrection? = nil,
                gyroCalibration: GyroCalibrationMode = .stored) {
        self.decoder = decoder
        self.slot = slot
        self.calibration = calibration
        gyroCorrection = GyroCorrection(mode: gyroCalibration, stored: motionCorrection)
        self.motionCorrection = gyroCorrection.stored
        controls = .neutral(slot)
        touch = TouchSnapshot(slot: slot)
    }

    /// One input report as read from the pad; false if the decoder refused it.
    public mutating func ingest(_ report: UnsafeRawBufferPointer) -> Bool {
        do throws(InputReportError) {
            try decoder.decode(report, into: &decoded)
        } catch {
            rejectedReports += 1
            return false
        }
        controls = PadSnapshots.controls(decoded, slot: slot)
        touch = PadSnapshots.touch(decoded, slot: slot)
        battery = decoded.battery.map { BatteryReport(slot: slot, percent: $0.percent, state: $0.state.rawValue) }
        let time = decoded.sensorMicros
        // A new sample has a new timestamp: a repeated report is not a new reading.
        if decoded.hasMotion, time != lastSensorTime {
            lastSensorTime = time
            var sample = PadSnapshots.motion(decoded.motion.first, timestampMicros: time, calibration: calibration)
            gyroCorrection.correct(&sample)
            motion.append(sample)
        }
        return true
    }

    public mutating func takeMotion(_ body: (WireMotionSample) -> Void) { motion.drain(body) }
}

/// Motion samples waiting for the forwarding loop, oldest first: at most `capacity`, the newest
/// kept, for a caller that stops draining. A ring in storage reserved once.
struct MotionBacklog {
    static let capacity = 16
    private var ring = [WireMotionSample](repeating: WireMotionSample(), count: capacity)
    private var oldest = 0, count = 0

    mutating func append(_ sample: WireMotionSample) {
        if count == Self.capacity {
            oldest = (oldest + 1) % Self.capacity
            count -= 1
        }
        ring[(oldest + count) % Self.capacity] = sample
        count += 1
    }

    mutating func drain(_ body: (WireMotionSample) -> Void) {
        for i in 0..<count { body(ring[(oldest + i) % Self.capacity]) }
        oldest = 0
        count = 0
    }
}

extension MotionCorrection {
    /// Takes the measured gyro bias off a wire sample.
    func correct(_ sample: inout WireMotionSample) {
        sample.gyroX -= Float(gyroBias.x); sample.gyroY -= Float(gyroBias.y); sample.gyroZ -= Float(gyroBias.z)
    }
}
