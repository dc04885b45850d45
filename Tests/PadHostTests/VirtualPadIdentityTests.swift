@testable import PadFamilies
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
            XCTAssertEqual(PlayStationVirtualPad.identity(for: sent, presenting: .dualSense).calibrationReport, DualSenseIdentityData.calibration, why)
        }
        var wrongFirmware = DualSenseIdentityData.firmwareInfo
        wrongFirmware[0] = 0x21
        XCTAssertEqual(PlayStationVirtualPad.identity(for: arrival(.dualSense, calibration: [], firmware: wrongFirmware)).firmwareInfo,
                       DualSenseIdentityData.firmwareInfo)
    }

    // MARK: The DualShock 4

    /// A DS4's calibration in the USB form (hid-tools' blob, the pad's own 0x02), shown as the
    /// Bluetooth DS4 the host presents: the same values in the 0x05 form, CRC included.
    func testADualShock4IsShownAsADualShock4WithItsCalibrationInTheBluetoothForm() throws {
        let usb: [UInt8] = Array(hex: "021e000500e2fff2224fddbe224ddd8d2239dd1c021c02e31f8bdf8c1eb4de302071e01000")
        var version = DualShock4IdentityData.versionInfo
        version[41] = 0x99
        let identity = PlayStationVirtualPad.identity(for: arrival(.dualShock4, calibration: usb, firmware: version))
        XCTAssertEqual(identity.kind, .dualShock4)
        XCTAssertEqual(identity.calibrationReport, try DualShock4Calibration.bluetoothForm(usb))
        XCTAssertTrue(BluetoothCRC.verify(seed: .feature, report: identity.calibrationReport))
        XCTAssertEqual(identity.calibration, try CalibrationParser.dualShock4(usb).calibration)
        XCTAssertEqual(identity.firmwareInfo, version)
        // `serve --virtual dualsense` still shows it as a DualSense, with the DualSense's reports.
        let asDualSense = PlayStationVirtualPad.identity(for: arrival(.dualShock4, calibration: usb, firmware: version), presenting: .dualSense)
        XCTAssertEqual(asDualSense.kind, .dualSense)
        XCTAssertEqual(asDualSense.calibrationReport, DualSenseIdentityData.calibration)
        // Other families are not PlayStation pads to present as themselves.
        XCTAssertNil(PlayStationVirtualPad.ownKind(of: arrival(.xbox, calibration: [])))
    }

    func testADualShock4sBrokenReportsGetTheDefaults() throws {
        var badCRC = DualShock4IdentityData.bluetoothCalibration
        badCRC[8] ^= 0x40
        var wrongVersion = DualShock4IdentityData.versionInfo
        wrongVersion[0] = 0xa4
        let sent: [(String, [UInt8], [UInt8])] = [
            ("a Bluetooth report whose CRC fails", badCRC, []),
            ("a DualSense's calibration", calibration(bias: 0, plus: 8192, minus: -8192), []),
            ("cut short", Array(DualShock4IdentityData.bluetoothCalibration.prefix(33)), Array(DualShock4IdentityData.versionInfo.prefix(40))),
            ("a version report with another id", [], wrongVersion),
        ]
        for (why, calibration, version) in sent {
            let identity = PlayStationVirtualPad.identity(for: arrival(.dualShock4, calibration: calibration, firmware: version))
            XCTAssertEqual(identity.calibrationReport, DualShock4IdentityData.bluetoothCalibration, why)
            XCTAssertEqual(identity.firmwareInfo, DualShock4IdentityData.versionInfo, why)
        }
    }

    /// What a game writes to the host's DS4 (SDL's Bluetooth effects report) comes back as a
    /// rumble lease with both motors and a lightbar message; a report with a bad CRC gives nothing.
    func testADualShock4sOutputReportsBecomeRumbleAndLightbar() {
        var state = DualShock4OutputState()
        state.rumble = MotorLevels(low: 255, high: 128)
        state.lightbar = RGBColor(red: 255, green: 0, blue: 128)
        var translator = GameOutputTranslator(slot: PadSlot(3), kind: .dualShock4)
        let messages = translator.messages(for: state.encoded(bus: .bluetooth))
        guard messages.count == 2, case .rumble(let lease) = messages[0], case .hidOutput(let output) = messages[1] else {
            return XCTFail("\(messages)")
        }
        XCTAssertEqual([lease.low, lease.high, lease.leftTrigger, lease.rightTrigger], [65535, 32896, 0, 0])
        XCTAssertEqual(lease.slot, PadSlot(3))
        XCTAssertEqual(output.fields, .lightbar)
        XCTAssertEqual([output.red, output.green, output.blue], [255, 0, 128])
        var corrupt = state.encoded(bus: .bluetooth)
        corrupt[6] ^= 1
        XCTAssertEqual(translator.messages(for: corrupt), [])
        // A DualSense translator does not read a DS4's report as its own.
        var dualSense = GameOutputTranslator(slot: PadSlot(3))
        XCTAssertEqual(dualSense.messages(for: state.encoded(bus: .bluetooth)), [])
    }
}

extension Array where Element == UInt8 {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self = bytes
    }
}

/// The host pad's address (issue 42): two DualSenses whose reports are equal (two emulated pads,
/// the demo's) got one address, and the kernel refused the second ("Duplicate device found for
/// MAC address"). It derives from the client's identity and the pad's own now.
final class HostPadAddressTests: XCTestCase {
    func arrival(slot: UInt8 = 0, unit: String, client: String) -> PadArrival {
        var identity = PadIdentity(calibration: FeatureReportBytes(DualSenseIdentityData.calibration)!,
                                   firmware: FeatureReportBytes(DualSenseIdentityData.firmwareInfo)!,
                                   unit: FeatureReportBytes(Array(unit.utf8))!)
        identity.client = FeatureReportBytes(Array(client.utf8))!
        return PadArrival(slot: PadSlot(slot), type: .dualSense, vendorID: 0x054c, productID: 0x0ce6, capabilities: [], name: "pad", identity: identity)
    }

    func address(_ arrival: PadArrival) -> [UInt8]? { HostPadAddress.stable(for: arrival, kind: .dualSense) }

    func testTwoPadsWithEqualReportsGetTwoAddresses() {
        let first = address(arrival(unit: "a0:5a:5e:00:00:01", client: "client-a"))
        let second = address(arrival(slot: 1, unit: "a0:5a:5e:00:00:02", client: "client-a"))
        XCTAssertNotNil(first)
        XCTAssertNotEqual(first, second)
    }

    func testTheSamePadOfAnotherClientGetsAnotherAddress() {
        XCTAssertNotEqual(address(arrival(unit: "a0:5a:5e:00:00:01", client: "client-a")), address(arrival(unit: "a0:5a:5e:00:00:01", client: "client-b")))
    }

    func testTheSamePadOfTheSameClientKeepsItsAddressWhateverItsSlot() {
        let before = address(arrival(slot: 0, unit: "a0:5a:5e:00:00:01", client: "client-a"))
        XCTAssertEqual(before, address(arrival(slot: 3, unit: "a0:5a:5e:00:00:01", client: "client-a")), "stable across reconnects")
        XCTAssertEqual(before.map { $0[0] & 0x03 }, 0x02, "locally administered, unicast: never a real pad's")
    }

    func testWithoutItsOwnIdentityTwoPadsStillDifferBySlot() {
        XCTAssertNotEqual(address(arrival(slot: 0, unit: "", client: "client-a")), address(arrival(slot: 1, unit: "", client: "client-a")))
    }

    /// The client sends the pad's own identity as the arrival's trailing field; an older host
    /// ignores it, an older client leaves it out.
    func testThePadsOwnIdentityCrossesTheWireButTheClientsNever() throws {
        let sent = arrival(unit: "a0:5a:5e:00:00:01", client: "client-a")
        var buffer = [UInt8](repeating: 0, count: 512)
        let length = try buffer.withUnsafeMutableBytes { raw -> Int in
            var w = WireWriter(raw)
            try WireCodec.beginPayload(&w)
            try WireCodec.encode(WireMessage.arrival(sent), into: &w)
            return w.count
        }
        var counters = WireCodec.Counters()
        var received: PadArrival?
        buffer.withUnsafeBytes { WireCodec.decode(UnsafeRawBufferPointer(rebasing: $0[0..<length]), counters: &counters) { if case .arrival(let a) = $0 { received = a } } }
        XCTAssertEqual(received?.identity.unit, sent.identity.unit)
        XCTAssertEqual(received?.identity.client, FeatureReportBytes(), "the host stamps its own")
    }
}
