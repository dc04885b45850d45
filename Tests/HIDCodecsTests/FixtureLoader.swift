import Foundation
import XCTest
@testable import HIDCodecs

/// Loads the copied fixtures (see Fixtures/README.md for origins and licences).
enum Fixture {
    static let root: URL = Bundle.module.url(forResource: "Fixtures", withExtension: nil)!

    static func url(_ path: String) -> URL { root.appendingPathComponent(path) }
    static func data(_ path: String) throws -> Data { try Data(contentsOf: url(path)) }
    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try data(path)) }
    static func text(_ path: String) throws -> String { try String(contentsOf: url(path), encoding: .utf8) }
    static func json(_ path: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: data(path)) as? [String: Any])
    }
    static func hex(_ text: String) -> [UInt8] { try! Hex.decode(text) }

    static let descriptorNames = [
        "hidtools_dualsense_usb_054c_0ce6", "hidtools_dualsense_bt_054c_0ce6",
        "hidtools_ds4_usb_054c_05c4", "hidtools_ds4_bt_054c_05c4", "hidtools_ps3_usb_054c_0268",
        "dualsense_edge_usb_054c_0df2_rogueenemy", "xboxone_s_02fd_bt_android_cts",
    ]
}
