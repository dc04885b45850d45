import XCTest
import HIDCodecs
import PadDevices
import WireProtocol
@testable import PadHost

/// What the host's virtual DualSense answers with for a forwarded pad's identity reports: the
/// physical pad's own when they are usable, padgate's defaults when a peer sends anything else.
final class ForwardedIdentityReportTests: XCTestCase {
    /// A calibration report with every gyro axis `plus`/`minus` around `bias` and the accelerometer
    /// at ±8192 (little-endian int16 fields at hid-playstation's offsets).
    func calibration(bias: Int16, plus: Int16, minus: Int16) -> [UInt8] {
        var fields: [Int: Int16] = [19: 540, 21: 540]
        for axis in 0..<3 {
            fields[1 + 2 * axis] = bias
            fields[7 + 4 * axis] = plus; fields[9 + 4 * axis] = minus
            fields[23 + 4 * axis] = 8192; fields[25 + 4 * axis] = -8192
        }
        var report = [UInt8](repeating: 0, count: 41)
        report[0] = 0x05
        for (offset, value) in fields { withUnsafeBytes(of: value.littleEndian) { report[offset] = $0[0]; report[offset + 1] = $0[1] } }
        return report
    }

    func arrival(_ kind: PadKind, calibration: [UInt8], firmware: [UInt8] = []) -> PadArrival {
        PadArrival(slot: PadSlot(0), type: kind, vendorID: 0x054c, productID: kind.canonicalIDs?.product ?? 0, capabilities: [], name: "pad",
                   identity: PadIdentity(calibration: FeatureReportBytes(calibration)!, firmware: FeatureReportBytes(firmware)!))
    }

    func testAnEdgesOwnReportsAreAnsweredAndItStaysAnEdge() {
        let own = calibration(bias: 30, plus: 9000, minus: -7200)
        var firmware = DualSenseIdentityData.firmwareInfo
        firmware[DualSenseIdentityData.updateVersionOffset] = 0x31
        let identity = PlayStationVirtualPad.identity(for: arrival(.dualSenseEdge, calibration: own, firmware: firmware))
        XCTAssertEqual(identity.kind, .dualSenseEdge)
        XCTAssertEqual(identity.calibrationReport, own)
        XCTAssertEqual(identity.calibration, try CalibrationParser.dualSense(own).calibration)
        XCTAssertEqual(identity.firmwareInfo, firmware)
    }

    func testReportsAPeerMustNotBeTrustedWithGetTheDefaults() {
        let defaults = PlayStationVirtualPad.identity(for: arrival(.dualSense, calibration: []))
        XCTAssertEqual(defaults.calibrationReport, DualSenseIdentityData.calibration)
        XCTAssertEqual(defaults.firmwareInfo, DualSenseIdentityData.firmwareInfo)
        let refused: [(String, PadArrival)] = [
            // Plausible as newer kernels read it, but an older kernel's gyro denominator is plus - minus = 0.
            ("zero legacy denominator", arrival(.dualSense, calibration: calibration(bias: 0, plus: 8192, minus: 8192))),
            ("scale 100× nominal", arrival(.dualSense, calibration: calibration(bias: 0, plus: 80, minus: -80))),
            ("cut short", arrival(.dualSense, calibration: Array(calibration(bias: 0, plus: 8192, minus: -8192).prefix(30)))),
            ("wrong report id", arrival(.dualSense, calibration: [0x09] + calibration(bias: 0, plus: 8192, minus: -8192).dropFirst())),
            ("a DualShock 4's", arrival(.dualShock4, calibration: calibration(bias: 0, plus: 8192, minus: -8192))),
        ]
        for (why, sent) in refused {
            XCTAssertEqual(PlayStationVirtualPad.identity(for: sent).calibrationReport, DualSenseIdentityData.calibration, why)
        }
        var wrongFirmware = DualSenseIdentityData.firmwareInfo
        wrongFirmware[0] = 0x21
        XCTAssertEqual(PlayStationVirtualPad.identity(for: arrival(.dualSense, calibration: [], firmware: wrongFirmware)).firmwareInfo,
                       DualSenseIdentityData.firmwareInfo)
    }
}
