import XCTest
import Foundation
@testable import HIDCodecs

/// The one "which pad is this" table: ids from the kernel's hid-ids.h and SDL's controller_list.h.
final class PadKindTests: XCTestCase {
    func testClassificationTable() {
        let cases: [(UInt16, UInt16, PadKind)] = [
            (0x054c, 0x0ce6, .dualSense), (0x054c, 0x0df2, .dualSenseEdge), (0x054c, 0x05c4, .dualShock4),
            (0x054c, 0x09cc, .dualShock4), (0x054c, 0x0ba0, .dualShock4), (0x057e, 0x2009, .switchPro),
            (0x045e, 0x02fd, .xbox), (0x045e, 0x0b13, .xbox), (0x054c, 0x0268, .generic), (0x2dc8, 0x6001, .generic),
            (0x28de, 0x1205, .steamDeck), (0x28de, 0x1302, .steamController), (0x28de, 0x1303, .steamController),
            (0x28de, 0x1304, .steamController), (0x28de, 0x1305, .steamController), (0x28de, 0x1102, .generic),
        ]
        for (vendor, product, kind) in cases {
            XCTAssertEqual(PadKind(vendorID: vendor, productID: product), kind, String(format: "%04x:%04x", vendor, product))
        }
    }

    func testAVirtualPadPresentsIdsThatClassifyBackToItsKind() {
        for kind in PadKind.allCases {
            guard let ids = kind.canonicalIDs else { XCTAssertTrue([.generic, .xbox].contains(kind), "\(kind) has no ids"); continue }
            XCTAssertEqual(PadKind(vendorID: ids.vendor, productID: ids.product), kind)
        }
    }

    /// The wire's pad type byte is the raw value: these numbers are in docs/wire.md and old clients.
    func testWireNumbersAndNamesAreStable() throws {
        XCTAssertEqual(PadKind.allCases.map(\.rawValue), [0, 1, 2, 3, 4, 5, 6, 7])
        XCTAssertEqual(PadKind.allCases.map(\.name), ["generic", "dualsense", "dualsense-edge", "dualshock4", "switch-pro", "xbox", "steam-deck",
                                                      "steam-controller"])
        for kind in PadKind.allCases { XCTAssertEqual(PadKind(name: kind.name), kind) }
        let json = try JSONEncoder().encode([PadKind.dualSenseEdge])
        XCTAssertEqual(String(decoding: json, as: UTF8.self), #"["dualsense-edge"]"#)
        XCTAssertEqual(try JSONDecoder().decode([PadKind].self, from: json), [.dualSenseEdge])
        XCTAssertThrowsError(try JSONDecoder().decode([PadKind].self, from: Data(#"["wiimote"]"#.utf8)))
    }

    /// Every button bit has one row, and no two rows share a name or a key on one driver.
    func testTheButtonTableCoversEveryBitOnce() {
        let rows = GamepadButtons.table
        XCTAssertEqual(rows.reduce(GamepadButtons()) { $0.union($1.button) }.rawValue, (1 << 25) - 1)
        XCTAssertEqual(Set(rows.map(\.button.rawValue)).count, rows.count)
        XCTAssertEqual(Set(rows.map(\.name)).count, rows.count)
        let evdev = rows.compactMap(\.evdevKey), xpad = rows.compactMap(\.xpadKey)
        XCTAssertEqual(Set(evdev).count, evdev.count)
        XCTAssertEqual(Set(xpad).count, xpad.count)
        for kind in PadKind.allCases { XCTAssertTrue(kind.buttons.isSubset(of: GamepadButtons(rawValue: (1 << 25) - 1))) }
    }
}
