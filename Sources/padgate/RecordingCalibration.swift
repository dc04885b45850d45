import ArgumentParser
import Foundation
import HIDCodecs
import PadFamilies
import PadSystem

/// `padgate calibrate FILE.hid`: the continuous calibration `forward` runs, over a recording of a
/// DualSense, Edge, DualShock 4 or Steam Deck: the rest windows it found and the gyro bias per axis.
struct RecordingCalibration {
    let path: String
    let run: RecordedGyroCalibration
    let calibrationSource: String
    let warnings: [String]

    /// `featureReport`: the pad's calibration report (hex), decoded as `calibrate --feature-report`
    /// decodes it; without it, the family's nominal scale.
    init(path: String, featureReport: String?, convention: CalibrationConvention, bus: PadBus?, keepPoints: Bool) throws {
        self.path = path
        let text = try InputFile.text(path, what: "recording", expected: "a hid-recorder recording", limit: InputFile.recordingLimit)
        let recording: HIDRecording
        do { recording = try HIDRecording(text: text) } catch { throw ValidationError("\(path): \(error)") }
        guard let (_, kind) = RecordedGyroCalibration.pad(in: recording, codecs: PadDrivers.inputCodec) else {
            throw ValidationError("\(path): \(RecordedCalibrationError.noPad)")
        }
        var warnings: [String] = []
        var calibration: MotionCalibration?
        if let featureReport {
            let bytes: [UInt8]
            do { bytes = try Hex.decode(featureReport) } catch { throw ValidationError("--feature-report: \(error)") }
            do throws(CalibrationError) {
                let result = try PadDrivers.driver(for: kind).parseCalibration(bytes, convention: convention, bus: bus)
                calibration = result.calibration
                warnings += result.warnings
            } catch {
                throw ValidationError("--feature-report: \(error)")
            }
            calibrationSource = "feature report 0x\(String(bytes.first ?? 0, radix: 16).leftPadded(2, "0")) (\(convention.rawValue) convention)"
        } else {
            calibrationSource = "nominal (no --feature-report: the family's default scale)"
        }
        do { run = try RecordedGyroCalibration(recording: recording, codecs: PadDrivers.inputCodec, calibration: calibration, keepPoints: keepPoints) } catch {
            throw ValidationError("\(path): \(error)")
        }
        if run.restWindows.isEmpty {
            warnings.append("no rest window: the pad never lay still for \(LiveCalibration.decimal(GyroBiasEstimator.Configuration().minimumRestSeconds, 1)) s, so the bias is unknown")
        }
        self.warnings = warnings + run.gravityWarnings
    }

    var json: JSONValue {
        func vector(_ v: MotionVector) -> JSONValue { .array(v.all.map(JSONValue.double)) }
        let r = run.refusals
        return .object([
            ("file", .string(path)),
            ("pad", .object([("type", .string(run.kind.name)), ("name", run.deviceName.map(JSONValue.string) ?? .null)])),
            ("calibration", .string(calibrationSource)),
            ("samples", .integer(run.samples)), ("seconds", .double(run.seconds)), ("rate_hz", .double(run.rate)),
            ("rest_windows", .array(run.restWindows.map { w in
                .object([("start_s", .double(w.start)), ("end_s", .double(w.end)), ("samples", .integer(w.samples)),
                         ("gyro_bias_dps", vector(w.gyroMean)), ("gyro_noise_dps", vector(w.gyroNoise)),
                         ("accel_mean_g", vector(w.accelMean)), ("gravity_g", .double(w.gravity))])
            })),
            ("gyro_bias_dps", run.restWindows.isEmpty ? .null : vector(run.estimate)),
            ("gyro_bias_uncertainty_dps", run.restWindows.isEmpty ? .null : .double(run.uncertainty)),
            ("gyro_noise_floor_dps", vector(run.gyroNoiseFloor)), ("accel_noise_floor_g", vector(run.accelNoiseFloor)),
            ("not_rest_blocks", .object([("frozen", .integer(r.frozen)), ("noisy", .integer(r.noisy)), ("outside_gate", .integer(r.outsideGate)),
                                         ("gyro_shifted", .integer(r.gyroShifted)), ("gravity_moved", .integer(r.gravityMoved))])),
            ("warnings", .array(warnings.map(JSONValue.string))),
        ])
    }

    var text: String {
        let d = LiveCalibration.decimal
        func v(_ m: MotionVector, _ places: Int = 3, signed: Bool = true) -> String { m.all.map { d($0, places, signed).leftPadded(8) }.joined() }
        var lines = [
            // The name is whatever the recorded device called itself: escaped for the terminal.
            "\(run.kind.displayName)\(run.deviceName.map { " (\(TerminalText.escaped($0)))" } ?? "") in \(TerminalText.escaped(path))",
            "\(run.samples) motion samples over \(d(run.seconds, 2, false)) s (\(d(run.rate, 1, false)) Hz); calibration: \(calibrationSource)",
        ]
        if run.restWindows.isEmpty {
            lines.append("no rest window found")
        } else {
            lines.append("rest windows (still for at least \(d(GyroBiasEstimator.Configuration().minimumRestSeconds, 1, false)) s):")
            lines.append("      from       to  samples  gyro bias x, y, z (deg/s)   noise x, y, z (deg/s)   gravity")
            for w in run.restWindows {
                lines.append(d(w.start, 2, false).leftPadded(10) + d(w.end, 2, false).leftPadded(9) + String(w.samples).leftPadded(9)
                             + "  " + v(w.gyroMean) + "   " + v(w.gyroNoise, 3, signed: false) + "   " + d(w.gravity, 4, false) + " g")
            }
            lines.append("gyro bias (the estimate at the end): \(v(run.estimate).trimmingCharacters(in: .whitespaces)) deg/s (± \(d(run.uncertainty, 3, false)))")
        }
        lines.append("noise floor: gyro \(v(run.gyroNoiseFloor, 3, signed: false).trimmingCharacters(in: .whitespaces)) deg/s, accel \(v(run.accelNoiseFloor, 4, signed: false).trimmingCharacters(in: .whitespaces)) g")
        let r = run.refusals
        let reasons = [(r.noisy, "noisy"), (r.outsideGate, "outside the gate"), (r.gyroShifted, "gyro shifted"), (r.gravityMoved, "gravity moved"), (r.frozen, "frozen")]
            .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        if !reasons.isEmpty { lines.append("blocks of \(d(GyroBiasEstimator.Configuration().blockSeconds, 2, false)) s not at rest: " + reasons.joined(separator: ", ")) }
        return lines.joined(separator: "\n")
    }

    var plot: GyroPlot {
        GyroPlot(title: "\(run.kind.displayName): gyro and its continuous calibration",
                 subtitle: "\(URL(fileURLWithPath: path).lastPathComponent), \(run.samples) samples, \(LiveCalibration.decimal(run.seconds, 1)) s; calibration: \(calibrationSource)"
                    + (run.restWindows.isEmpty ? "" : "; bias at the end \(run.estimate.all.map { LiveCalibration.decimal($0, 3, signed: true) }.joined(separator: " ")) deg/s"),
                 points: run.points, windows: run.restWindows)
    }
}
