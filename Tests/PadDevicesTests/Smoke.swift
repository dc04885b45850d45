import XCTest
@testable import PadDevices
final class SmokeTests: XCTestCase { func testX() {} }
