import LogCapture
import Logging
import PadSystem
import XCTest

final class LogHandlerTests: XCTestCase {
    func testTheTerminalLineSaysClientAndSlotBeforeTheMessage() {
        let metadata: Logger.Metadata = ["client": "'box'", "slot": "2", "session": "1a2b", "limit": "rate"]
        XCTAssertEqual(TerminalLogHandler.format(prefix: "padgate serve: ", message: "arrived", metadata: metadata, trailing: false),
                       "padgate serve: client 'box': slot 2: arrived")
        XCTAssertEqual(TerminalLogHandler.format(prefix: "", message: "arrived", metadata: metadata, trailing: true),
                       "client 'box': slot 2: arrived [session=1a2b]", "other metadata follows at debug level; the limit reason never")
    }

    func testPeerTriggeredLinesAreLimitedPerReasonAndTheRestCounted() {
        let lines = CapturedLog()
        var logger = lines.logger
        logger.handler = RateLimitedLogHandler(wrapping: logger.handler)
        for i in 0..<10 { logger.warning("refused \(i)", metadata: [RateLimitedLogHandler.reasonKey: "rate"]) }
        logger.warning("other reason", metadata: [RateLimitedLogHandler.reasonKey: "hello"])
        logger.info("not limited")
        XCTAssertEqual(lines.messages, ["refused 0", "refused 1", "refused 2", "other reason", "not limited"])
        var copy = logger
        copy[metadataKey: "client"] = "x"
        copy.warning("refused again", metadata: [RateLimitedLogHandler.reasonKey: "rate"])
        XCTAssertEqual(lines.count, 5, "a copy with more metadata shares the windows")
    }
}
