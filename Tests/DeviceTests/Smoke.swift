import XCTest
@testable import PadDevices
final class DeviceSmokeTests: XCTestCase { func testX() {} }
