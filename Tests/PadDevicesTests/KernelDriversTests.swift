import Foundation
import XCTest
@testable import PadDevices

/// Which module binds a HID device, from alias lines as the kernel's modules.alias writes them
/// (hid-steam's Deck row from 6.3, hid-generic's catch-all, hid-playstation's DualSense row).
final class KernelDriversTests: XCTestCase {
    static let table = """
        alias hid:b0003g*v0000054Cp00000CE6 hid_playstation
        alias hid:b*g0001v*p* hid_generic
        alias hid:b0003g*v000028DEp00001205 hid_steam
        alias hid:b0003g*v000028DEp00001102 hid_steam
        alias usb:v28DEp1205d*dc*dsc*dp*ic*isc*ip*in* something_else
        """

    func testTheFamilysModuleNotHidGeneric() {
        let aliases = KernelDrivers.parse(Self.table)
        XCTAssertEqual(aliases.count, 4, "HID lines only")
        XCTAssertEqual(KernelDrivers.module(for: "hid:b0003g0001v000028DEp00001205", in: aliases), "hid_steam")
        XCTAssertEqual(KernelDrivers.module(for: "hid:b0003g0001v0000054Cp00000CE6", in: aliases), "hid_playstation")
        XCTAssertNil(KernelDrivers.module(for: "hid:b0005g0001v000028DEp00001205", in: aliases), "the Deck's row is for USB only")
        XCTAssertNil(KernelDrivers.module(for: "hid:b0003g0001v00001234p00005678", in: aliases), "hid-generic is not an answer")
        // A kernel before 6.3: hid-steam without the Deck's row.
        let older = KernelDrivers.parse(Self.table.split(separator: "\n").filter { !$0.contains("p00001205") }.joined(separator: "\n"))
        XCTAssertNil(KernelDrivers.module(for: "hid:b0003g0001v000028DEp00001205", in: older))
    }

    /// /proc/bus/input/devices' blocks, in the layout input.c's seq_show writes: a DualSense's
    /// gamepad and motion device, and a device without uniq or joystick.
    func testRegisteredInputsAreReadFromTheKernelsList() {
        let text = """
            I: Bus=0005 Vendor=054c Product=0ce6 Version=8100
            N: Name="Sony Interactive Entertainment DualSense Wireless Controller"
            P: Phys=
            S: Sysfs=/devices/virtual/misc/uhid/0005:054C:0CE6.0001/input/input7
            U: Uniq=10:20:30:40:50:60
            H: Handlers=event5 js0 
            B: PROP=0

            I: Bus=0005 Vendor=054c Product=0ce6 Version=8100
            N: Name="Sony Interactive Entertainment DualSense Wireless Controller Motion Sensors"
            P: Phys=
            S: Sysfs=/devices/virtual/misc/uhid/0005:054C:0CE6.0001/input/input8
            U: Uniq=10:20:30:40:50:60
            H: Handlers=event6 
            B: PROP=40

            I: Bus=0019 Vendor=0000 Product=0001 Version=0000
            N: Name="Power Button"
            P: Phys=PNP0C0C/button/input0
            S: Sysfs=/devices/LNXSYSTM:00/LNXPWRBN:00/input/input0
            U: Uniq=
            H: Handlers=kbd event0 

            """
        let inputs = KernelDrivers.registeredInputs(in: text)
        XCTAssertEqual(inputs.map(\.name), ["Sony Interactive Entertainment DualSense Wireless Controller",
                                            "Sony Interactive Entertainment DualSense Wireless Controller Motion Sensors", "Power Button"])
        XCTAssertEqual(inputs.map(\.uniq), ["10:20:30:40:50:60", "10:20:30:40:50:60", ""])
        XCTAssertEqual(inputs.map(\.handlers), [["event5", "js0"], ["event6"], ["kbd", "event0"]])
        XCTAssertTrue(KernelDrivers.registeredInputs(in: "").isEmpty)
    }
}
