import Glibc
import PadSystem
import XCTest

final class SystemCallTests: XCTestCase {
    func testAnInterruptedCallIsRunAgainAndOtherFailuresNameTheCall() {
        var calls = 0
        let result = try? SystemCall.retrying("read") { () -> Int in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 7
        }
        XCTAssertEqual(result, 7)
        XCTAssertEqual(calls, 3)
        XCTAssertThrowsError(try SystemCall.retrying("write") { () -> Int in errno = EAGAIN; return -1 }) { error in
            XCTAssertEqual(error as? SystemCallError, SystemCallError("write", errno: .wouldBlock))
        }
        XCTAssertThrowsError(try SystemCall.retrying("libevdev_next_event", .negatedErrno) { -Int32(ENODEV) }) { error in
            XCTAssertEqual((error as? SystemCallError)?.errno, .noDevice)
        }
    }

    func testAnOwnedDescriptorClosesOnce() throws {
        let owned = try OwnedDescriptor("open") { open("/dev/null", O_RDONLY | O_CLOEXEC) }
        let number = owned.rawValue
        owned.close()
        // The number may now belong to a new descriptor: a second close must not touch it.
        let reused = try OwnedDescriptor("open") { open("/dev/null", O_RDONLY | O_CLOEXEC) }
        owned.close()
        if reused.rawValue == number { XCTAssertEqual(fcntl(number, F_GETFD) >= 0, true, "the reused number is still open") }
    }

    func testAWakePipeWakesAPollAndDrains() {
        let pipe = WakePipe()
        XCTAssertFalse(Poll.wait([pipe.descriptor], timeout: .zero)[0].readable)
        pipe.wake(); pipe.wake()
        XCTAssertTrue(Poll.wait([pipe.descriptor], timeout: .seconds(1))[0].readable)
        pipe.drain()
        XCTAssertFalse(Poll.wait([pipe.descriptor], timeout: .zero)[0].readable)
    }
}
