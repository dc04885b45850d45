import XCTest
@testable import HIDCodecs
final class SmokeTests: XCTestCase { func testX() {} }
