import HIDCodecs
import PadSystem

/// How a motion node's values become deg/s and g: each axis's evdev resolution (counts per unit).
/// The kernel has already applied the pad's factory calibration, so this is the whole conversion.
public struct MotionUnits: Equatable, Sendable {
    static let gyroCodes = [EvdevCode.ABS_RX, EvdevCode.ABS_RY, EvdevCode.ABS_RZ]
    static let accelCodes = [EvdevCode.ABS_X, EvdevCode.ABS_Y, EvdevCode.ABS_Z]

    public var gyroPerDegreePerSecond: [Double]
    public var accelPerG: [Double]

    public init(gyroPerDegreePerSecond: [Double], accelPerG: [Double]) {
        self.gyroPerDegreePerSecond = gyroPerDegreePerSecond; self.accelPerG = accelPerG
    }

    /// A node that declares no resolution (0) is taken to use hid-playstation's units.
    public init(_ device: EvdevDevice) {
        func resolutions(_ codes: [UInt32], fallback: Int32) -> [Double] {
            codes.map { code in Double(device.axisInfo(code).map(\.resolution).flatMap { $0 > 0 ? $0 : nil } ?? fallback) }
        }
        gyroPerDegreePerSecond = resolutions(Self.gyroCodes, fallback: MotionCalibration.gyroResolutionPerDegreePerSecond)
        accelPerG = resolutions(Self.accelCodes, fallback: MotionCalibration.accelResolutionPerG)
    }

    public func gyro(_ values: [Int32]) -> MotionVector { gyro(EvdevPadFrame.Triple(x: values[0], y: values[1], z: values[2])) }
    public func accel(_ values: [Int32]) -> MotionVector { accel(EvdevPadFrame.Triple(x: values[0], y: values[1], z: values[2])) }
    public func gyro(_ t: EvdevPadFrame.Triple) -> MotionVector { Self.scale(t, gyroPerDegreePerSecond) }
    public func accel(_ t: EvdevPadFrame.Triple) -> MotionVector { Self.scale(t, accelPerG) }

    private static func scale(_ t: EvdevPadFrame.Triple, _ per: [Double]) -> MotionVector {
        MotionVector(x: Double(t.x) / per[0], y: Double(t.y) / per[1], z: Double(t.z) / per[2])
    }
}

/// A pad's motion-sensor node read frame by frame: one reading per report the pad sent, not just
/// the latest state, so statistics over the readings see every sample.
public final class MotionReader {
    public let device: EvdevDevice
    public let units: MotionUnits

    public init(pad: Pad) throws {
        guard let node = pad.node(.motion) else {
            let hint = pad.kind.hasSeparateSensorNodes
                ? " (hid-playstation exposes them as a separate \"Motion Sensors\" node: is the pad bound to it rather than hid-generic?)"
                : ""
            throw DeviceError.unsupported("\(pad.name) has no motion sensors padgate can read\(hint)")
        }
        device = try EvdevDevice(path: node.path)
        units = MotionUnits(device)
    }

    public var descriptor: FileDescriptor { device.descriptor }

    /// Reads what is queued and hands `body` the gyro (deg/s) and accelerometer (g) of each
    /// completed frame. Returns the number of frames.
    @discardableResult
    public func readFrames(_ body: (_ gyro: MotionVector, _ accel: MotionVector) -> Void) throws -> Int {
        var frames = 0
        try device.readAvailable { event in
            guard UInt32(event.type) == EvdevCode.EV_SYN, UInt32(event.code) == EvdevCode.SYN_REPORT else { return }
            // libevdev has applied the frame's events to its state by the time it returns SYN_REPORT.
            let values = { (codes: [UInt32]) in codes.map { self.device.value(type: EvdevCode.EV_ABS, code: $0) } }
            body(units.gyro(values(MotionUnits.gyroCodes)), units.accel(values(MotionUnits.accelCodes)))
            frames += 1
        }
        return frames
    }
}
