import Foundation
@testable import PadFamilies
import PadSystem
import XCTest
@testable import PadDevices
import HIDCodecs

/// Against the kernel's hid-nintendo: the emulated Switch Pro answers the driver's whole probe
/// (device info, SPI reads of its own calibration, report mode, IMU and vibration enable, lights),
/// so the driver creates its gamepad and IMU nodes, and reads sticks and motion through the pad's
/// calibration exactly as hid-nintendo's arithmetic says.
final class EmulatedSwitchProTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess([UHIDDevice.path]) }

    /// A calibration no default has: the left stick's user calibration (behind its magic) differs
    /// from its factory one, the right stick and the IMU have only factory values, off-centre.
    static let calibration: SwitchProCalibration = {
        var c = SwitchProCalibration.defaults
        typealias Stick = SwitchProCalibration.Stick
        c.factory.replaceSubrange(29..<38, with: SwitchProCalibration.packLeft(x: Stick(min: 700, center: 2100, max: 3400), y: Stick(min: 600, center: 1950, max: 3300)))
        c.factory.replaceSubrange(38..<47, with: SwitchProCalibration.packRight(x: Stick(min: 520, center: 1980, max: 3480), y: Stick(min: 610, center: 2040, max: 3390)))
        c.user.replaceSubrange(0..<2, with: [0xB2, 0xA1])
        c.user.replaceSubrange(2..<11, with: SwitchProCalibration.packLeft(x: Stick(min: 650, center: 2050, max: 3450), y: Stick(min: 560, center: 2010, max: 3420)))
        for (i, (offset, scale)) in [(Int16(-120), Int16(16390)), (35, 16300), (210, 16450)].enumerated() {
            SwitchProCalibration.put16(&c.factory, 2 * i, offset); SwitchProCalibration.put16(&c.factory, 6 + 2 * i, scale)
        }
        for (i, (offset, scale)) in [(Int16(14), Int16(13300)), (-9, 13420), (3, 13371)].enumerated() {
            SwitchProCalibration.put16(&c.factory, 12 + 2 * i, offset); SwitchProCalibration.put16(&c.factory, 18 + 2 * i, scale)
        }
        return c
    }()

    static func padFor(_ pad: EmulatedSwitchPro, udev: Udev) -> Pad? {
        eventually(timeout: .seconds(30)) {
            udev.pads().first { $0.uniq == pad.uniq && $0.hidraw != nil && $0.gamepadNode != nil && $0.node(.motion) != nil }
        }
    }

    func testHidNintendoBindsItWithItsCalibrationAndReadsSticksAndMotionThroughIt() throws {
        let calibration = Self.calibration
        XCTAssertTrue(calibration.isPlausible)
        let pad = try EmulatedSwitchPro(calibration: calibration)
        defer { pad.stop() }
        XCTAssertTrue(pad.waitUntilOpened(timeout: .seconds(20)), "hid-nintendo never opened the pad")
        let found = try XCTUnwrap(Self.padFor(pad, udev: try Udev()), "udev never showed the Switch Pro with its gamepad and IMU nodes")
        XCTAssertEqual(found.kind, .switchPro)
        XCTAssertEqual(found.bus, .bluetooth)

        let reader = try LivePadReader(pad: found)
        let sticks = calibration.sticks, imuCal = calibration.imu
        var controls = SwitchProReports.Controls()
        controls.buttons = [.east, .l1, .r2, .options, .capture]
        controls.dpad = .upLeft
        controls.left = (3300, 900); controls.right = (1000, 3000)
        var imu = SwitchProReports.IMUSample()
        imu.accel = (-3000, 4100, 250); imu.gyro = (1200, -800, 33)
        // hid-nintendo: x as mapped, y negated (the pad's +y is up); gyro and accel through the IMU calibration.
        let expectedLeft = [SwitchProMath.stick(3300, sticks.leftX), -SwitchProMath.stick(900, sticks.leftY)]
        let expectedRight = [SwitchProMath.stick(1000, sticks.rightX), -SwitchProMath.stick(3000, sticks.rightY)]
        let expectedGyro = [SwitchProMath.gyro(1200, imuCal.gyro[0]), SwitchProMath.gyro(-800, imuCal.gyro[1]), SwitchProMath.gyro(33, imuCal.gyro[2])]
        let expectedAccel = [SwitchProMath.accel(-3000, imuCal.accel[0]), SwitchProMath.accel(4100, imuCal.accel[1]), SwitchProMath.accel(250, imuCal.accel[2])]
        var seen: LivePadState?
        for _ in 0..<100 where seen == nil {
            try pad.send(controls, imu: imu)
            seen = try waitForState(reader, timeout: .milliseconds(100), expiryIsExpected: true) {
                Set($0.buttons) == ["east", "l1", "r2", "options", "capture"] && $0.dpad == "up-left"
                    && $0.left_stick == expectedLeft && $0.right_stick == expectedRight && $0.gyro == expectedGyro && $0.accel == expectedAccel
            }
        }
        XCTAssertNotNil(seen, "evdev never showed the fed report; last \(reader.snapshot()); expected sticks \(expectedLeft) \(expectedRight), gyro \(expectedGyro), accel \(expectedAccel)")
    }
}
