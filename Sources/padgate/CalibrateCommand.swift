import ArgumentParser
import Foundation
import HIDCodecs

extension CalibrationConvention: ExpressibleByArgument {}

/// `padgate calibrate`: motion calibration from a feature report given as hex.
struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Compute motion-sensor calibration from a calibration feature report.",
        discussion: """
            DualSense: feature report 0x05 (41 bytes; over Bluetooth the last 4 bytes are a CRC32 with seed 0xA3).
            DualShock 4: feature report 0x02 over USB, 0x05 over Bluetooth (--model dualshock4).
            Conventions: 'kernel' (Linux 6.2+, gyro bias treated as 0; the default) or 'legacy' (older kernels, SDL).
            See docs/calibration.md.
            """)

    enum Model: String, ExpressibleByArgument, CaseIterable { case dualsense, dualshock4 }

    @Option(name: .customLong("feature-report"), help: "The feature report bytes in hex, report id first.")
    var featureReport: String

    @Option(help: "Which pad sent the report (dualsense, dualshock4).")
    var model: Model = .dualsense

    @Option(help: "kernel or legacy.")
    var convention: CalibrationConvention = .default

    @Flag(help: "Print JSON: {\"gyro\": [{bias, numer, denom} x3], \"accel\": [...], \"convention\": ...}.")
    var json = false

    func run() throws {
        let bytes: [UInt8]
        do { bytes = try Hex.decode(featureReport) } catch { throw ValidationError("--feature-report: \(error)") }
        let result: CalibrationResult
        do {
            switch model {
            case .dualsense: result = try CalibrationParser.dualSense(bytes, convention: convention)
            case .dualshock4: result = try CalibrationParser.dualShock4(bytes, convention: convention)
            }
        } catch { throw ValidationError("\(error)") }
        for warning in result.warnings { FileHandleStderr.write("warning: \(warning)\n") }
        if json {
            print(CalibrationParser.json(result).serialized(pretty: true))
            return
        }
        for (name, triple) in [("gyro", result.calibration.gyro), ("accel", result.calibration.accel)] {
            for (axis, c) in zip(["x", "y", "z"], triple.all) {
                print("\(name) \(axis): bias \(c.bias), numer \(c.numerator), denom \(c.denominator)")
            }
        }
        print("convention: \(result.calibration.convention.rawValue)")
    }
}

enum FileHandleStderr {
    static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
