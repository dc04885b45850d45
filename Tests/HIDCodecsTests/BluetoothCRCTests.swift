import XCTest
@testable import HIDCodecs

final class BluetoothCRCTests: XCTestCase {
    // Feature 0x05 blobs from calibration/*.json are published with "crc_ok": true (seed 0xA3).
    func testPublishedFeatureBlobsVerifyWithFeatureSeed() throws {
        let dualsense = try Fixture.json("calibration/dualsense_feature_0x05.json")
        let blobs = try XCTUnwrap(dualsense["blobs"] as? [[String: Any]])
        let bt = try XCTUnwrap(blobs.first { $0["id"] as? String == "A_bt" }?["hex"] as? String)
        XCTAssertTrue(BluetoothCRC.verify(seed: .feature, report: Fixture.hex(bt)))
        XCTAssertFalse(BluetoothCRC.verify(seed: .input, report: Fixture.hex(bt)), "the seed byte is part of the CRC")

        let ds4 = try Fixture.json("calibration/ds4_feature_calibration.json")
        let ds4Blobs = try XCTUnwrap(ds4["blobs"] as? [[String: Any]])
        let ds4bt = try XCTUnwrap(ds4Blobs.first { $0["id"] as? String == "ds4_bt_0x05" }?["hex"] as? String)
        XCTAssertTrue(BluetoothCRC.verify(seed: .feature, report: Fixture.hex(ds4bt)))
    }

    func testKernelSelftestBluetoothInputReportsVerifyAndCorruptionIsDetected() throws {
        let vectors = try Fixture.json("input_vectors/hidtools_kernel_selftest_vectors.json")
        let devices = try XCTUnwrap(vectors["devices"] as? [String: [String: Any]])
        var checked = 0
        for name in ["dualsense_bt", "ds4_bt"] {
            let cases = try XCTUnwrap(devices[name]?["cases"] as? [[String: Any]])
            for testCase in cases {
                for step in testCase["steps"] as! [[String: Any]] {
                    var report = Fixture.hex(step["report"] as! String)
                    XCTAssertEqual(report.count, 78)
                    XCTAssertTrue(BluetoothCRC.verify(seed: .input, report: report), "\(name) \(testCase["test"]!)")
                    report[10] ^= 0x01
                    XCTAssertFalse(BluetoothCRC.verify(seed: .input, report: report))
                    checked += 1
                }
            }
        }
        XCTAssertGreaterThan(checked, 300)
    }

    func testStampWritesLittleEndianTrailerThatVerifies() throws {
        // pydualsense's BT vectors have correct CRCs (seed 0xA2) even though its layout is off: the CRC is still golden.
        let output = try Fixture.json("output_vectors/dualsense_output_pydualsense.json")
        let vectors = try XCTUnwrap(output["vectors"] as? [[String: Any]])
        for vector in vectors where vector["bus"] as? String == "bt" {
            let golden = Fixture.hex(vector["report_hex"] as! String)
            var restamped = golden
            restamped.replaceSubrange(74..<78, with: [0, 0, 0, 0])
            BluetoothCRC.stamp(seed: .output, report: &restamped)
            XCTAssertEqual(restamped, golden, vector["name"] as! String)
        }
    }

    func testTooShortReportNeverVerifies() {
        XCTAssertFalse(BluetoothCRC.verify(seed: .input, report: [0x31, 0, 0, 0]))
        XCTAssertFalse(BluetoothCRC.verify(seed: .input, report: []))
    }
}

/// The one comparison of wrapping 16-bit sequences (RFC 1982): across the wrap, and at half way.
final class Serial16Tests: XCTestCase {
    func testDistanceTakesTheShorterWayRound() {
        XCTAssertEqual(Serial16.distance(1, from: 0xFFFF), 2)
        XCTAssertEqual(Serial16.distance(0xFFFF, from: 1), -2)
        XCTAssertEqual(Serial16.distance(7, from: 7), 0)
        XCTAssertEqual(Serial16.distance(0x8000, from: 0), -0x8000, "half way round counts as behind")
    }

    func testUnwrapPlacesNearTheNewest() {
        let newest: Int64 = (1 << 32) + 0xFFFE
        XCTAssertEqual(Serial16.unwrap(0x0001, near: newest), newest + 3)
        XCTAssertEqual(Serial16.unwrap(0xFFF0, near: newest), newest - 14)
    }
}
