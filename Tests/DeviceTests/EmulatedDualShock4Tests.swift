import Foundation
@testable import PadFamilies
import PadSystem
import XCTest
@testable import PadDevices
import HIDCodecs

/// Against the kernel's own DualShock 4 driver (hid-sony on Debian 12's 6.1 kernel, hid-playstation
/// from 6.2, so on Debian 13's 6.12 and later): the emulated DualShock 4 is bound on both buses with its own
/// reports, and the driver's calibrated motion follows the pad's calibration report.
final class EmulatedDualShock4Tests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess([UHIDDevice.path]) }

    func testABluetoothDualShock4IsBoundWithItsOwnCalibrationAndInputReachesEvdev() throws {
        try check(bus: .bluetooth)
    }

    func testAUSBDualShock4IsBoundWithItsOwnCalibrationAndInputReachesEvdev() throws {
        try check(bus: .usb)
    }

    func check(bus: PadBus) throws {
        let calibration = Self.calibration
        let pad = try EmulatedDualShock4Tests.makePad(bus: bus, calibration: calibration)
        defer { pad.stop() }
        let found = try XCTUnwrap(padFor(pad, udev: try Udev()), "udev never showed the DualShock 4 with its nodes, hidraw and battery")
        XCTAssertEqual(found.kind, .dualShock4)
        XCTAssertEqual(found.bus, bus)
        XCTAssertEqual(found.evdev.map(\.role), [.gamepad, .touchpad, .motion])

        // The driver's and SDL's reads, answered in the pad's own forms.
        let hidraw = try HIDRawDevice(path: try XCTUnwrap(found.hidraw))
        if bus == .bluetooth {
            let bt = try hidraw.featureReport(0x05, length: 41)
            XCTAssertTrue(BluetoothCRC.verify(seed: .feature, report: bt))
            XCTAssertEqual(Array(bt.prefix(37)), Array(calibration.prefix(37)))
        }
        let usb = try hidraw.featureReport(0x02, length: 37)
        XCTAssertEqual(try CalibrationParser.dualShock4(usb).calibration, try CalibrationParser.dualShock4(calibration).calibration,
                       "the USB form carries other values than the Bluetooth one")

        // Input: buttons, d-pad, sticks, triggers, a touch, and motion through the running driver's
        // arithmetic (hid-sony up to 6.1, hid-playstation from 6.2: KernelVersion.dualShock4Convention).
        let reader = try LivePadReader(pad: found)
        var input = GamepadState.dualSenseAtRest
        input.buttons = [.east, .r1, .ps, .touchpad]
        input.dpad = .downLeft
        input.leftStick = StickPosition(x: 17, y: 240)
        input.rightStick = StickPosition(x: 255, y: 3)
        input.l2 = 99
        input.apply(.touch(slot: 0, x: 1500, y: 800))
        let gyro = Vector3(x: 2000, y: -3000, z: 11), accel = Vector3(x: -500, y: 8100, z: 700)
        input.motion.first = MotionSample(gyro: gyro, accel: accel)
        let driver = try CalibrationParser.dualShock4(calibration, convention: KernelVersion.dualShock4Convention).calibration
        let expectedGyro = [driver.gyro.x.apply(gyro.x), driver.gyro.y.apply(gyro.y), driver.gyro.z.apply(gyro.z)]
        let expectedAccel = [driver.accel.x.apply(accel.x), driver.accel.y.apply(accel.y), driver.accel.z.apply(accel.z)]
        var seen: LivePadState?
        for _ in 0..<100 where seen == nil {
            input.sensorTimestamp &+= 750
            try pad.send(input)
            seen = try waitForState(reader, timeout: .milliseconds(100), expiryIsExpected: true) {
                Set($0.buttons) == ["east", "r1", "ps", "touchpad"] && $0.dpad == "down-left" && $0.left_stick == [17, 240]
                    && $0.right_stick == [255, 3] && $0.l2 == 99 && $0.r2 == 0
                    && $0.touch.first.map { $0.x == 1500 && $0.y == 800 } == true && $0.gyro == expectedGyro && $0.accel == expectedAccel
            }
        }
        XCTAssertNotNil(seen, "evdev never showed the fed report; last \(reader.snapshot()), expected gyro \(expectedGyro) accel \(expectedAccel)")
    }

    /// A DS4 Bluetooth calibration no default has: the CTS pad's with every gyro plus value
    /// raised and the accelerometer spans moved, CRC restamped.
    static let calibration: [UInt8] = {
        var report = DualShock4IdentityData.bluetoothCalibration
        func add(_ offset: Int, _ delta: Int16) {
            let value = Int16(bitPattern: UInt16(report[offset]) | UInt16(report[offset + 1]) << 8) &+ delta
            report[offset] = UInt8(truncatingIfNeeded: value); report[offset + 1] = UInt8(truncatingIfNeeded: UInt16(bitPattern: value) >> 8)
        }
        for offset in [7, 9, 11] { add(offset, 431) }     // gyro plus, pitch/yaw/roll (Bluetooth order)
        add(3, -17)                                       // yaw bias
        add(23, 120); add(29, -90)                        // accel x plus, y minus
        BluetoothCRC.stamp(seed: .feature, report: &report)
        return report
    }()

    static func makePad(bus: PadBus, calibration: [UInt8] = DualShock4IdentityData.bluetoothCalibration,
                        idleRepeat: Duration? = nil) throws -> EmulatedPlayStationPad {
        try EmulatedPlayStationPad(kind: .dualShock4, bus: bus, calibration: calibration, idleRepeat: idleRepeat)
    }
}
