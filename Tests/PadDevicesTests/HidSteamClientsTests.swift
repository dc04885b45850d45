import Foundation
import XCTest
@testable import PadFamilies

final class HidSteamClientsTests: XCTestCase {
    /// hid-steam's sysfs as its probe leaves it (hid-steam.c: the Deck's own device bound without a
    /// hidraw node, and its client, group 0x0103, with one): ready only once every Deck has its
    /// client's node; one that hid-generic holds, or a client without its node, are not; a real
    /// Deck's keyboard interface (hid-steam's, with its own node, no client) is no pad.
    func testTheSteamClientIsReadyOnlyOnceEveryDeckHasItsNode() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-hid-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        func device(_ name: String, group: String, driver: String?, hidraw: String?) throws {
            let dir = root + "/" + name
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try Data("hid:b0003\(group)v000028DEp00001205\n".utf8).write(to: URL(fileURLWithPath: dir + "/modalias"))
            if let driver { try FileManager.default.createSymbolicLink(atPath: dir + "/driver", withDestinationPath: "../../../../bus/hid/drivers/\(driver)") }
            if let hidraw { try FileManager.default.createDirectory(atPath: dir + "/hidraw/" + hidraw, withIntermediateDirectories: true) }
        }
        func ready() -> Bool { HidSteamClients.ready(bus: 3, vendor: 0x28de, product: 0x1205, devices: root) }
        XCTAssertFalse(HidSteamClients.ready(bus: 3, vendor: 0x28de, product: 0x1205, devices: root + "/none"))
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try device("0003:054C:0CE6.0001", group: "g0001", driver: "playstation", hidraw: "hidraw0")
        XCTAssertFalse(ready(), "no Deck")
        try device("0003:28DE:1205.0002", group: "g0001", driver: nil, hidraw: nil)
        XCTAssertFalse(ready(), "a Deck no driver has bound yet")
        try FileManager.default.createSymbolicLink(atPath: root + "/0003:28DE:1205.0002/driver", withDestinationPath: "../../../../bus/hid/drivers/hid-steam")
        XCTAssertFalse(ready(), "a Deck in hid-steam's probe: no client yet")
        try device("0003:28DE:1205.0003", group: "g0103", driver: "hid-steam", hidraw: nil)
        XCTAssertFalse(ready(), "its client without its node")
        try FileManager.default.createDirectory(atPath: root + "/0003:28DE:1205.0003/hidraw/hidraw1", withIntermediateDirectories: true)
        XCTAssertTrue(ready())
        try device("0003:28DE:1205.0005", group: "g0001", driver: "hid-steam", hidraw: "hidraw3")
        XCTAssertTrue(ready(), "a real Deck's keyboard interface is no pad")
        try device("0003:28DE:1205.0004", group: "g0001", driver: "hid-generic", hidraw: "hidraw2")
        XCTAssertFalse(ready(), "a second Deck that hid-generic holds (hid-steam's module not loaded yet)")
    }
}
