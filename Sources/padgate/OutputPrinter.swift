import Foundation
import HIDCodecs
import MonotonicTime
import PadDevices
import PadFamilies
import PadSystem

/// Prints what reaches an emulated pad: output reports as one line of hex plus the decoded fields,
/// uinput force-feedback requests as one line each.
enum OutputPrinter {
    /// A report a program wrote to an emulated pad, read as its family's driver reads it (a
    /// DualSense's decoded field by field).
    static func print(_ report: [UInt8], describedBy driver: any PadDriver, json: Bool, since start: MonotonicInstant) {
        if driver is DualSenseDriver { return print(report, json: json, since: start) }
        let time = (MonotonicInstant.now - start).seconds
        let summary = driver.describeOutput(report)
        if json {
            Swift.print(JSONValue.object([
                ("time", .double((time * 1000).rounded() / 1000)), ("report_id", .integer(report.first ?? 0)),
                ("length", .integer(report.count)), ("hex", .string(Hex.encode(report))), ("summary", .string(summary)),
            ]).serialized())
        } else {
            Swift.print(String(format: "%9.3f output 0x%02x (%d bytes) ", time, report.first ?? 0, report.count)
                        + Hex.encode(report, separator: " ") + "  → " + summary)
        }
        fflush(nil)
    }

    static func print(_ report: [UInt8], json: Bool, since start: MonotonicInstant) {
        let time = (MonotonicInstant.now - start).seconds
        let decoded: Result<DecodedDualSenseOutput, DualSenseOutputDecodeError>
        do { decoded = .success(try DualSenseOutputDecoder.decode(report)) } catch { decoded = .failure(error) }
        if json {
            var fields: [(String, JSONValue)] = [
                ("time", .double((time * 1000).rounded() / 1000)), ("report_id", .integer(report.first ?? 0)),
                ("length", .integer(report.count)), ("hex", .string(Hex.encode(report))),
            ]
            switch decoded {
            case .success(let d): fields.append(("decoded", d.json))
            case .failure(let e): fields.append(("decode_error", .string(e.description)))
            }
            Swift.print(JSONValue.object(fields).serialized())
        } else {
            let fields: String
            switch decoded {
            case .success(let d): fields = d.summary
            case .failure(let e): fields = "undecodable: \(e)"
            }
            Swift.print(String(format: "%9.3f output 0x%02x (%d bytes) ", time, report.first ?? 0, report.count)
                        + Hex.encode(report, separator: " ") + "  → " + fields)
        }
        fflush(nil)
    }

    static func print(_ event: UInputRumbleReceiver.Event, json: Bool, since start: MonotonicInstant) {
        let time = ((MonotonicInstant.now - start).seconds * 1000).rounded() / 1000
        var fields: [(String, JSONValue)] = [("time", .double(time))]
        switch event {
        case .uploaded(let effect):
            fields += [("event", .string("rumble_uploaded")), ("id", .integer(Int(effect.id))),
                       ("low", .integer(Int(effect.levels.low))), ("high", .integer(Int(effect.levels.high))),
                       ("length_ms", .integer(Int(effect.length.milliseconds)))]
        case .erased(let id):
            fields += [("event", .string("rumble_erased")), ("id", .integer(Int(id)))]
        case .played(let id, let count):
            fields += [("event", .string(count == 0 ? "rumble_stopped" : "rumble_played")), ("id", .integer(Int(id)))]
            if count != 0 { fields.append(("count", .integer(Int(count)))) }
        }
        if json {
            Swift.print(JSONValue.object(fields).serialized())
        } else {
            Swift.print(String(format: "%9.3f ", time) + fields.dropFirst().map { "\($0.0)=\($0.1.serialized())" }.joined(separator: " "))
        }
        fflush(nil)
    }
}
