import HIDCodecs
import XCTest
@testable import Feedback

final class RumblePatternTests: XCTestCase {
    func testTextPatternParsesStepsAndComments() throws {
        let pattern = try RumblePattern(text: "# knock\n255 0 100\n\n0 0 50  # rest\n10 20 30\n")
        XCTAssertEqual(pattern.steps, [.init(255, 0, milliseconds: 100), .init(0, 0, milliseconds: 50), .init(10, 20, milliseconds: 30)])
        XCTAssertEqual(pattern.duration, .milliseconds(180))
    }

    func testBadLinesSayWhichLineAndWhatIsExpected() {
        for (text, line) in [("255 0 100\n256 0 10", 2), ("1 2", 1), ("1 2 0", 1), ("a b c", 1)] {
            XCTAssertThrowsError(try RumblePattern(text: text)) {
                guard case .badLine(let n, _)? = $0 as? RumblePattern.ParseError else { return XCTFail("\($0)") }
                XCTAssertEqual(n, line, text)
            }
        }
        XCTAssertThrowsError(try RumblePattern(text: "# nothing\n")) { XCTAssertEqual($0 as? RumblePattern.ParseError, .empty) }
    }

    func testBuiltInsEndSilentSoARepeatNeverGlues() {
        for (name, pattern) in RumblePattern.builtIn {
            XCTAssertEqual(pattern.steps.last?.levels, .silent, name)
            XCTAssertGreaterThan(pattern.duration, .milliseconds(200), name)
        }
    }
}
