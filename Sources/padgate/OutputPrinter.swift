import Foundation
import HIDCodecs
import PadDevices

/// Prints output reports that reach an emulated pad: hex, plus the decoded fields.
enum OutputPrinter {
    struct Line: Encodable {
        var time: Double
        var report_id: UInt8
        var length: Int
        var hex: String
    }

    static func print(_ report: [UInt8], bus: VirtualDualSense.Bus, json: Bool, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let time = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if json {
            JSONLines.print(Line(time: time, report_id: report.first ?? 0, length: report.count, hex: Hex.encode(report)))
        } else {
            Swift.print(String(format: "%9.3f output 0x%02x (%d bytes) ", time, report.first ?? 0, report.count) + Hex.encode(report, separator: " "))
        }
    }
}
