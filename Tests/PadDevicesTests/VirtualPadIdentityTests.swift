@testable import PadFamilies
import XCTest
import HIDCodecs
@testable import PadDevices

/// What the virtual pads tell drivers and SDL about themselves, against the thresholds in their sources.
final class VirtualPadIdentityTests: XCTestCase {
    /// SDL_hidapi_ps5.c reads the update version from feature 0x20 bytes 44-45 and halves every
    /// rumble level below 0x0224; hid-playstation uses vibration v2 from 0x0215.
    func testTheFirmwareIsOneSDLDrivesAtFullStrength() {
        let info = DualSenseIdentityData.firmwareInfo
        let offset = DualSenseIdentityData.updateVersionOffset
        let update = UInt16(info[offset]) | UInt16(info[offset + 1]) << 8
        XCTAssertGreaterThanOrEqual(update, 0x0224)
        XCTAssertEqual(info.count, 64)
    }

    /// uinput keeps 80 bytes of a name with its NUL (UINPUT_MAX_NAME_SIZE): a long name is cut at
    /// a character, never inside one.
    func testLongNamesAreCutAtACharacter() {
        let name = String(repeating: "é", count: 60)   // 120 bytes of UTF-8
        let fitted = UInputGamepad.fittingName(name)
        XCTAssertLessThanOrEqual(fitted.utf8.count, 79)
        XCTAssertEqual(fitted, String(repeating: "é", count: 39))
        XCTAssertEqual(UInputGamepad.fittingName(UInputGamepad.Identity.xbox360.name), "Microsoft X-Box 360 pad")
    }

    func testPadgatesOwnPadsAreToldApartByPhys() {
        func pad(_ phys: String) -> Pad {
            Pad(id: "x", kind: .xbox, kernelBus: PadBus.usb.kernelBus, vendorID: 0x045e, productID: 0x028e, name: "Microsoft X-Box 360 pad", uniq: "",
                phys: phys, hidraw: nil, evdev: [], capabilities: [])
        }
        XCTAssertTrue(pad(PadPhys.hostVirtual).isHostVirtualPad)
        XCTAssertEqual(pad(PadPhys.hostVirtual).madeByPadgate, "host")
        XCTAssertEqual(pad(PadPhys.uinput).madeByPadgate, "emulated")
        XCTAssertNil(pad("usb-0000:00:14.0-1/input0").madeByPadgate)
        XCTAssertFalse(pad("usb-0000:00:14.0-1/input0").isHostVirtualPad)
    }
}
