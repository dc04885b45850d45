import Foundation
import HIDCodecs
import XCTest
@testable import PadDevices

final class MotionCorrectionStoreTests: XCTestCase {
    var store: MotionCorrectionStore!

    override func setUpWithError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-store-\(UUID())")
        store = MotionCorrectionStore(directory: directory.appendingPathComponent("calibration"))
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
    }

    func correction(_ serial: String, bias: Double = 1.25) -> MotionCorrection {
        let result = StillnessResult(samples: 375, gyroBias: MotionVector(x: bias, y: -0.5, z: 0), gyroNoise: MotionVector(x: 0.1, y: 0.1, z: 0.1),
                                     accelMean: MotionVector(x: 0, y: 1, z: 0), accelNoise: .zero, warnings: [])
        return MotionCorrection(serial: serial, result: result, measuredAt: "2025-01-01T00:00:00Z")
    }

    func testSavedCorrectionLoadsBackByItsSerialInAnyCase() throws {
        XCTAssertNil(try store.load(serial: "1e:73:20:75:40:9e"), "nothing stored yet")
        let url = try store.save(correction("1e:73:20:75:40:9e"))
        XCTAssertEqual(url.lastPathComponent, "1e:73:20:75:40:9e.json")
        XCTAssertEqual(try store.load(serial: "1E:73:20:75:40:9E"), correction("1e:73:20:75:40:9e"), "a MAC is the same in either case")
        try store.save(correction("1e:73:20:75:40:9e", bias: -3))
        XCTAssertEqual(try store.load(serial: "1e:73:20:75:40:9e")?.gyroBias.x, -3, "calibrating again replaces the correction")
        XCTAssertTrue(try store.remove(serial: "1e:73:20:75:40:9e"))
        XCTAssertFalse(try store.remove(serial: "1e:73:20:75:40:9e"))
        XCTAssertNil(try store.load(serial: "1e:73:20:75:40:9e"))
    }

    func testSerialsCannotNameAPathAndAnEmptySerialIsRefused() throws {
        for serial in ["../../etc/passwd", "a/b", ".hidden", "x y"] {
            let url = try store.url(forSerial: serial)
            XCTAssertEqual(url.deletingLastPathComponent().standardizedFileURL.path, store.directory.standardizedFileURL.path, serial)
            XCTAssertFalse(url.lastPathComponent.dropLast(5).contains { $0 == "/" || $0 == "." || $0 == " " }, url.lastPathComponent)
        }
        XCTAssertThrowsError(try store.url(forSerial: " ")) { XCTAssertEqual($0 as? MotionCorrectionError, .noSerial) }
        XCTAssertThrowsError(try store.save(correction(""))) { XCTAssertTrue("\($0)".contains("no serial number"), "\($0)") }
    }

    func testAnUnusableFileNamesItselfAndTheFix() throws {
        let cases: [(String, String)] = [
            ("{not json", "cannot use the motion correction"),
            (#"{"version": 2, "serial": "aa", "gyro_bias_dps": [0,0,0], "gyro_noise_dps": [0,0,0], "gravity_g": [0,1,0], "samples": 1, "measured_at": ""}"#, "format version 2"),
            (#"{"version": 1, "serial": "bb", "gyro_bias_dps": [0,0,0], "gyro_noise_dps": [0,0,0], "gravity_g": [0,1,0], "samples": 1, "measured_at": ""}"#, "for serial bb"),
        ]
        for (text, expected) in cases {
            let url = try store.url(forSerial: "aa")
            try FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try store.load(serial: "aa"), text) {
                let message = "\($0)"
                XCTAssertTrue(message.contains(expected) && message.contains(url.path) && message.contains("padgate calibrate"), message)
            }
        }
    }

    func testMotionUnitsDivideByEachAxisResolution() {
        let units = MotionUnits(gyroPerDegreePerSecond: [1024, 1024, 512], accelPerG: [8192, 8192, 4096])
        XCTAssertEqual(units.gyro([1024, -2048, 256]), MotionVector(x: 1, y: -2, z: 0.5))
        XCTAssertEqual(units.accel([0, 8192, -4096]), MotionVector(x: 0, y: 1, z: -1))
    }
}
