import Foundation
import HIDCodecs
import PadDevices

/// Prints output reports that reach an emulated pad: one line of hex plus the decoded fields.
enum OutputPrinter {
    static func print(_ report: [UInt8], bus: VirtualDualSense.Bus, json: Bool, since start: ContinuousClock.Instant) {
        let time = (ContinuousClock.now - start).seconds
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
        fflush(stdout)
    }
}
