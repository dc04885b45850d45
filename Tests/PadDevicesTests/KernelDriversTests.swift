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
}
