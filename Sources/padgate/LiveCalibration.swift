import ArgumentParser
import Foundation
import HIDCodecs
import Logging
import MonotonicTime
import PadClient
import PadDevices
import PadFamilies
import PadSystem

/// `padgate calibrate PAD`: measures the pad at rest through its motion evdev node (the values
/// `forward` reads, already calibrated by the kernel), reports, and stores the gyro bias.
struct LiveCalibration {
    let pad: Pad
    let convention: CalibrationConvention
    let json: Bool
    let store = MotionCorrectionStore.standard

    init(selector: String, convention: CalibrationConvention, json: Bool) throws {
        pad = try PadSelector.select(try PadSelector(selector), from: try Udev().pads())
        self.convention = convention
        self.json = json
    }

    func reset() throws {
        guard !pad.uniq.isEmpty else {
            // No serial, no stored correction (MotionCorrectionStore): nothing to do, and not an error.
            return print(json ? JSONValue.object([("serial", .string("")), ("removed", .bool(false)), ("path", .null)]).serialized()
                              : "\(TerminalText.escaped(pad.name)) reports no serial number, so no correction is ever stored for it: nothing to remove")
        }
        let url = try store.url(forSerial: pad.uniq)
        let removed = try store.remove(serial: pad.uniq)
        if json {
            print(JSONValue.object([("serial", .string(pad.uniq)), ("removed", .bool(removed)), ("path", .string(url.path))]).serialized())
        } else if removed {
            print("removed the motion correction for \(pad.uniq) (\(url.path)); 'padgate forward' now sends its motion as the kernel reports it")
        } else {
            print("no motion correction was stored for \(pad.uniq) (\(url.path))")
        }
    }

    func measure(seconds: Double, save: Bool, plot: String? = nil) throws {
        let reader = try MotionReader(pad: pad)
        // Refuse before making the user hold still for nothing.
        if save && pad.uniq.isEmpty { throw MotionCorrectionError.noSerial }
        var warnings: [String] = []
        var factory: (report: UInt8, result: CalibrationResult)?
        do { factory = try Self.factoryCalibration(of: pad, convention: convention) } catch {
            warnings.append("cannot read the factory calibration (\(error)); measuring anyway")
        }
        warnings += factory?.result.warnings ?? []
        for warning in warnings { console.warning("warning: \(warning)") }

        var trace = plot.map { _ in PlotTrace() }
        let sampled = try sample(reader, seconds: seconds) { gyro, accel, at in trace?.add(gyro: gyro, accel: accel, at: at) }
        if let plot, var trace {
            // Drawn whatever the result: a refused measurement is what a person wants to see.
            if let last = trace.estimator.finish() { trace.windows.append(last) }
            try GyroPlot(title: "\(pad.kind.displayName) \(pad.uniq): gyro at rest, as 'padgate calibrate' measured it",
                         subtitle: "\(reader.device.path), \(trace.points.count) samples; shaded: rest windows 'padgate forward' would calibrate from",
                         points: trace.points, windows: trace.windows).write(to: plot)
        }
        let result = try sampled.measurement.result()
        for warning in result.warnings { console.warning("warning: \(warning)") }

        var saved: URL?
        if save {
            let stamp = ISO8601DateFormatter().string(from: Date())
            saved = try store.save(MotionCorrection(serial: pad.uniq, result: result, measuredAt: stamp))
        }
        let report = CalibrationReport(pad: pad, motionNode: reader.device.path, factory: factory, result: result,
                                       seconds: sampled.span, warnings: warnings + result.warnings, saved: saved)
        print(json ? report.json.serialized(pretty: true) : report.text)
    }

    /// Reads samples for `seconds` from the first one; stops early when the pad moves.
    func sample(_ reader: MotionReader, seconds: Double,
                each: (MotionVector, MotionVector, MonotonicInstant) -> Void = { _, _, _ in }) throws -> (measurement: StillnessMeasurement, span: Double) {
        var measurement = StillnessMeasurement()
        var progress = ProgressReport(total: seconds)
        defer { progress.end() }
        console.info("keep the pad still — on a table, hands off — for \(Self.decimal(seconds, 1)) s")
        SignalTrap.install {}
        let opened = MonotonicInstant.now
        var first: MonotonicInstant?
        var last = opened
        while true {
            let now = MonotonicInstant.now
            if let first, now - first >= .milliseconds(Int(seconds * 1000)) { break }
            // A pad that sends nothing for a second is asleep, or its motion is not reported.
            if now - last > .seconds(1) { throw LiveCalibrationError.silent(path: reader.device.path, samples: measurement.samples) }
            if SignalTrap.fired { throw LiveCalibrationError.interrupted }
            _ = Poll.wait([reader.descriptor, SignalTrap.descriptor], timeout: .milliseconds(100))
            try reader.readFrames { gyro, accel in
                let at = MonotonicInstant.now
                if first == nil { first = at }
                last = at
                measurement.add(gyro: gyro, accel: accel)
                each(gyro, accel, at)
            }
            if let movement = measurement.movement { throw movement }
            if let first { progress.show(done: (last - first).seconds, samples: measurement.samples) }
        }
        return (measurement, first.map { (last - $0).seconds } ?? 0)
    }

    /// The factory calibration, read through hidraw as hid-playstation reads it at probe (report ids
    /// and sizes from the driver). Sony pads only; nil for other pads or without a hidraw node.
    static func factoryCalibration(of pad: Pad, convention: CalibrationConvention) throws -> (report: UInt8, result: CalibrationResult)? {
        guard let path = pad.hidraw else { return nil }
        let driver = PadDrivers.driver(for: pad.kind), bus = pad.bus ?? .usb
        guard let report = driver.calibrationReport(bus: bus) else { return nil }
        let bytes = try HIDRawDevice(path: path).featureReport(report.id, length: report.length)
        return (report.id, try driver.parseCalibration(bytes, convention: convention, bus: bus))
    }

    static func decimal(_ value: Double, _ places: Int, signed: Bool = false) -> String {
        String(format: signed ? "%+.\(places)f" : "%.\(places)f", value)
    }
}

/// A live pad's samples for `calibrate PAD --plot`, with the continuous calibration run over them
/// (stamped by the reading time: evdev's own clock is not at hand here).
struct PlotTrace {
    var estimator = GyroBiasEstimator()
    var points: [RecordedGyroCalibration.Point] = []
    var windows: [GyroBiasEstimator.RestWindow] = []
    var start: MonotonicInstant?

    mutating func add(gyro: MotionVector, accel: MotionVector, at: MonotonicInstant) {
        let first = start ?? at
        start = first
        let applied = estimator.correction
        let micros = UInt32(truncatingIfNeeded: (at - first).wholeNanoseconds / 1000)
        if let w = estimator.add(gyro: gyro.simd, accel: accel.simd, timestampMicros: micros) { windows.append(w) }
        points.append(.init(time: (at - first).seconds, gyro: gyro, correction: applied, resting: estimator.isResting))
    }
}

/// What `calibrate PAD` prints: text for people, `--json` for scripts.
struct CalibrationReport {
    var pad: Pad
    var motionNode: String
    var factory: (report: UInt8, result: CalibrationResult)?
    var result: StillnessResult
    var seconds: Double
    var warnings: [String]
    var saved: URL?

    var rate: Double { seconds > 0 ? Double(result.samples - 1) / seconds : 0 }

    var json: JSONValue {
        func vector(_ v: MotionVector) -> JSONValue { .array(v.all.map(JSONValue.double)) }
        var members: [(String, JSONValue)] = [
            ("pad", .object([("type", .string(pad.kind.name)), ("name", .string(pad.name)), ("vid_pid", .string(pad.vidpid)),
                             ("serial", .string(pad.uniq)), ("motion_node", .string(motionNode))])),
        ]
        if let factory { members.append(("factory_calibration", CalibrationParser.json(factory.result))) }
        members += [
            ("samples", .integer(result.samples)), ("seconds", .double(seconds)), ("rate_hz", .double(rate)),
            ("gyro_bias_dps", vector(result.gyroBias)), ("gyro_noise_dps", vector(result.gyroNoise)),
            ("accel_mean_g", vector(result.accelMean)), ("accel_noise_g", vector(result.accelNoise)),
            ("gravity_g", .double(result.gravityMagnitude)), ("gravity_error_g", .double(result.gravityError)),
            ("warnings", .array(warnings.map(JSONValue.string))),
            ("saved", saved.map { .string($0.path) } ?? .null),
        ]
        return .object(members)
    }

    var text: String {
        let d = LiveCalibration.decimal
        func row(_ label: String, _ v: MotionVector, _ unit: String, signed: Bool) -> String {
            label.padding(toLength: 12, withPad: " ", startingAt: 0)
                + v.all.map { d($0, 3, signed).leftPadded(8) }.joined() + "  " + unit
        }
        var lines = ["\(pad.kind.displayName) [\(pad.vidpid)] \(pad.uniq.isEmpty ? "(no serial)" : pad.uniq)  motion: \(motionNode)"]
        if let factory {
            lines.append("factory calibration (feature 0x\(String(factory.report, radix: 16, uppercase: false).leftPadded(2, "0")), \(factory.result.calibration.convention.rawValue) convention):")
            lines += CalibrateCommand.lines(factory.result.calibration).dropLast().map { "  " + $0 }
        }
        lines += [
            "measured \(d(seconds, 2, false)) s, \(result.samples) samples (\(d(rate, 1, false)) Hz)",
            "                   x       y       z",
            row("gyro bias", result.gyroBias, "deg/s", signed: true),
            row("gyro noise", result.gyroNoise, "deg/s (std dev)", signed: false),
            row("accel mean", result.accelMean, "g", signed: true),
            "gravity     \(d(result.gravityMagnitude, 4, false)) g (\(d(result.gravityError, 4, true)) g from 1 g)",
        ]
        if let saved {
            lines.append("stored \(saved.path): 'padgate forward' subtracts this gyro bias from this pad's motion ('--reset' removes it)")
        } else {
            lines.append("not stored (--no-save)")
        }
        return lines.joined(separator: "\n")
    }
}

/// Progress on standard error: a bar redrawn in place on a terminal, a line a second otherwise.
struct ProgressReport {
    let total: Double
    let terminal = standardErrorIsTerminal
    private var shownSeconds = 0
    private var shownTenths = -1
    private var drawn = false

    init(total: Double) { self.total = total }

    mutating func show(done: Double, samples: Int) {
        if terminal {
            // Redraw ten times a second, not at the pad's report rate.
            guard Int(done * 10) != shownTenths else { return }
            shownTenths = Int(done * 10)
            let width = 30, filled = max(0, min(width, Int(done / total * Double(width))))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            TerminalOutput.write("\r\u{1b}[K[\(bar)] \(LiveCalibration.decimal(done, 1)) / \(LiveCalibration.decimal(total, 1)) s  \(samples) samples")
            drawn = true
        } else if Int(done) > shownSeconds {
            shownSeconds = Int(done)
            console.info("calibrate: \(shownSeconds) of \(LiveCalibration.decimal(total, 1)) s, \(samples) samples")
        }
    }

    func end() { if drawn { TerminalOutput.write("\n") } }
}

enum LiveCalibrationError: Error, CustomStringConvertible {
    case silent(path: String, samples: Int)
    case interrupted

    var description: String {
        switch self {
        case .silent(let path, 0):
            return "no motion samples arrived from \(path) within 1 s: is the pad asleep? Wake it (PS button), or re-plug it, and try again"
        case .silent(let path, let samples):
            return "motion samples from \(path) stopped after \(samples): the pad went to sleep or lost its connection; nothing stored"
        case .interrupted:
            return "interrupted: nothing stored"
        }
    }
}

extension String {
    func leftPadded(_ width: Int, _ pad: Character = " ") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
