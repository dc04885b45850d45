import ArgumentParser
import Foundation
import HIDCodecs
import Logging
import PadFamilies
import PadSystem


/// `padgate calibrate PAD`: measures a still pad's gyro bias and stores a correction that
/// `forward` applies; `padgate calibrate --feature-report HEX`: decodes a calibration report.
struct CalibrateCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Measure a still pad's gyro bias and store a correction, find a recording's rest windows and bias, or decode a calibration feature report.",
        discussion: """
            With PAD: reads the pad's factory calibration, then its motion sensors for --seconds while it lies \
            still, and reports the gyro's residual bias and noise (deg/s) and gravity as the accelerometer sees \
            it (g). The gyro bias is stored under the pad's serial ($PADGATE_STATE_DIR or $XDG_STATE_HOME/padgate, \
            calibration/SERIAL.json) and subtracted by 'padgate forward'. A pad that moves is refused.
            With FILE.hid (a hid-recorder recording of a DualSense, Edge or DualShock 4): runs the continuous \
            calibration 'padgate forward' runs over it and reports the rest windows it found and the gyro bias per \
            axis (deg/s); its calibration from --feature-report HEX, else the family's nominal scale. \
            --plot FILE.svg draws the gyro axes over time with the rest windows and the bias subtracted.
            With --feature-report: DualSense feature report 0x05 (41 bytes over USB and Bluetooth alike; over USB the \
            last 4 bytes are zero, over Bluetooth they are a CRC32 with seed 0xA3, which is checked: --transport auto \
            refuses a report whose last 4 bytes are neither); DualShock 4 feature report 0x02 over USB, 0x05 over \
            Bluetooth, CRC checked (--model dualshock4).
            Conventions: 'kernel' (Linux 6.2+, gyro bias treated as 0; the default) or 'legacy' (older kernels, SDL).
            See docs/calibration.md.
            """)

    @Argument(help: "The pad to measure: an index from 'padgate list', one of its /dev nodes, or vid:pid; or a hid-recorder recording (FILE.hid).")
    var pad: String?

    @Option(help: "With PAD or FILE.hid: draw the gyro over time, the rest windows and the bias subtracted, as an SVG image.")
    var plot: String?

    /// PAD names a recording: a path to something that is not a device node.
    var recording: String? {
        guard let pad else { return nil }
        let type = (try? FileManager.default.attributesOfItem(atPath: pad))?[.type] as? FileAttributeType
        if type == .typeCharacterSpecial || (type == nil && InspectCommand.namesAPad(pad)) { return nil }
        return pad
    }

    @Option(name: .customLong("feature-report"), help: "Decode these feature report bytes (hex, report id first) instead of measuring a pad.")
    var featureReport: String?

    @Option(help: "With --feature-report: which pad sent the report (dualsense, dualsense-edge, dualshock4; default dualsense).")
    var model: PlayStationKind?

    @Option(help: "With --feature-report for a DualSense: how the report was read, auto (zero trailer: USB; valid CRC32: Bluetooth), usb (no CRC check) or bluetooth (CRC required).",
            completion: .list(["usb", "bluetooth", "auto"]))
    var transport: String?
    /// The bus `--transport` names; nil for auto.
    var reportBus: PadBus? { transport.flatMap { PadBus(rawValue: $0) } }

    @Option(help: "kernel or legacy: how the factory calibration is read.")
    var convention: CalibrationConvention = .default

    @Option(parsing: .unconditional, help: "With PAD: how long to measure (default 3).", transform: SecondsOption.parse)
    var seconds: Double?

    @Flag(name: [.customLong("no-save"), .customLong("dry-run")], help: "With PAD: measure and report, but store nothing.")
    var noSave = false

    @Flag(help: "With PAD: remove the pad's stored correction instead of measuring.")
    var reset = false

    @Flag(help: "Print JSON.")
    var json = false

    static let defaultSeconds = 3.0

    func validate() throws {
        if plot?.isEmpty == true { throw ValidationError("--plot needs a file name (FILE.svg)") }
        if recording != nil {
            let padOnly = [("--seconds", seconds != nil), ("--no-save", noSave), ("--reset", reset), ("--model", model != nil)].filter(\.1).map(\.0)
            if !padOnly.isEmpty {
                throw ValidationError("\(padOnly.joined(separator: ", ")) \(padOnly.count == 1 ? "is" : "are") for a live PAD; a recording's pad and its samples are in the file")
            }
            if let transport, transport != "auto" && PadBus(rawValue: transport) == nil {
                throw ValidationError("The value '\(transport)' is invalid for '--transport <transport>'. Please provide one of 'usb', 'bluetooth' or 'auto'.")
            }
            return
        }
        if featureReport != nil && plot != nil { throw ValidationError("--plot draws a pad's or a recording's motion: give a PAD or FILE.hid") }
        switch (pad, featureReport) {
        case (nil, nil): throw ValidationError("give a PAD to measure (see 'padgate list'), or --feature-report HEX to decode a report")
        case (.some, .some): throw ValidationError("give either a PAD or --feature-report, not both (--feature-report goes with a recording, FILE.hid)")
        case (nil, .some):
            let padOnly = [("--seconds", seconds != nil), ("--no-save", noSave), ("--reset", reset)].filter(\.1).map(\.0)
            if !padOnly.isEmpty {
                throw ValidationError("\(padOnly.joined(separator: ", ")) \(padOnly.count == 1 ? "needs" : "need") a PAD to measure, not --feature-report")
            }
            if let transport, transport != "auto" && PadBus(rawValue: transport) == nil {
                throw ValidationError("The value '\(transport)' is invalid for '--transport <transport>'. Please provide one of 'usb', 'bluetooth' or 'auto'.")
            }
            if transport != nil && model?.kind == .dualShock4 {
                throw ValidationError("--transport is for DualSense reports; a DualShock 4 report's id says how it was read (0x02 USB, 0x05 Bluetooth, CRC checked)")
            }
        case (.some, nil):
            if model != nil || transport != nil { throw ValidationError("--model and --transport are for --feature-report; a live pad's model and bus are known") }
            if reset && plot != nil { throw ValidationError("--reset removes the stored correction; it measures nothing to plot") }
            if reset && (noSave || seconds != nil) { throw ValidationError("--reset removes the stored correction; it measures nothing, so --seconds and --no-save do not apply") }
            if let seconds, !(0.5...60).contains(seconds) { throw ValidationError("--seconds must be from 0.5 to 60") }
        }
    }

    func run() throws {
        if let recording {
            let analysis = try RecordingCalibration(path: recording, featureReport: featureReport, convention: convention,
                                                    bus: reportBus, keepPoints: plot != nil)
            if !json { for warning in analysis.warnings { console.warning("warning: \(warning)") } }
            if let plot { try analysis.plot.write(to: plot) }
            print(json ? analysis.json.serialized(pretty: true) : analysis.text)
            return
        }
        if let featureReport { return try decode(featureReport) }
        SignalTrap.install {}  // before the pad is opened: a signal at any point ends it in order
        let live = try LiveCalibration(selector: pad ?? "", convention: convention, json: json)
        if reset { return try live.reset() }
        try live.measure(seconds: seconds ?? Self.defaultSeconds, save: !noSave, plot: plot)
    }

    func decode(_ hex: String) throws {
        let bytes: [UInt8]
        do { bytes = try Hex.decode(hex) } catch { throw ValidationError("--feature-report: \(error)") }
        guard let reportID = bytes.first else {
            throw ValidationError("--feature-report is empty: give the report's bytes in hex, report id first (41 bytes for a DualSense's 0x05)")
        }
        let result: CalibrationResult
        do throws(CalibrationError) {
            result = try PadDrivers.driver(for: (model ?? .dualSense).kind).parseCalibration(bytes, convention: convention, bus: reportBus)
        } catch {
            let hint = error == .unverifiableTrailer(reportID: reportID) ? " (--transport usb)" : ""
            throw ValidationError("--feature-report: \(error)\(hint)")
        }
        for warning in result.warnings { console.warning("warning: \(warning)") }
        if json {
            print(CalibrationParser.json(result).serialized(pretty: true))
        } else {
            print(Self.lines(result.calibration).joined(separator: "\n"))
        }
    }

    /// A calibration as text, one axis a line.
    static func lines(_ calibration: MotionCalibration) -> [String] {
        var lines: [String] = []
        for (name, triple) in [("gyro", calibration.gyro), ("accel", calibration.accel)] {
            for (axis, c) in zip(["x", "y", "z"], triple.all) {
                lines.append("\(name) \(axis): bias \(c.bias), numer \(c.numerator), denom \(c.denominator)")
            }
        }
        return lines + ["convention: \(calibration.convention.rawValue)"]
    }
}
