import Foundation
import Glibc
import PadSystem
import PadgateRunner
import XCTest

/// Files a person names: reads bounded and only of regular files, decided before a byte is read;
/// writes that replace a regular file whole and never put one where a FIFO or device node was.
final class UserFileTests: XCTestCase {
    var directory: String!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-userfile-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: directory) }

    func readFailure(_ path: String, limit: Int = 1 << 20) -> UserFile.ReadFailure? {
        do { _ = try UserFile.read(path, limit: limit); return nil } catch { return error }
    }

    func writeFailure(_ path: String, _ text: String = "x") -> UserFile.WriteFailure? {
        do { try UserFile.write(Array(text.utf8), to: path); return nil } catch { return error }
    }

    func kind(_ path: String) -> UserFile.Kind? {
        var info = stat()
        return stat(path, &info) == 0 ? UserFile.Kind(mode: info.st_mode) : nil
    }

    func testReadsARegularFileWithinItsLimit() throws {
        let path = directory + "/small"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try UserFile.read(path, limit: 3), [1, 2, 3])
        XCTAssertEqual(readFailure(path, limit: 2), .tooLarge(size: 3, limit: 2))
        try Data().write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try UserFile.read(path, limit: 3), [])
        XCTAssertEqual(readFailure(directory + "/missing"), .missing)
    }

    /// A sparse 2 GiB file costs nothing: its size is refused before anything is read.
    func testAHugeSparseFileIsRefusedBySizeWithoutReadingIt() throws {
        let path = directory + "/huge.wav"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil))
        XCTAssertEqual(truncate(path, 2 << 30), 0)
        let start = ContinuousClock.now
        XCTAssertEqual(readFailure(path, limit: 64 << 20), .tooLarge(size: 2 << 30, limit: 64 << 20))
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(1), "read 2 GiB before refusing it")
        XCTAssertEqual(UserFile.ReadFailure.tooLarge(size: 2 << 30, limit: 64 << 20).description, "is 2048 MiB; at most 64 MiB is read")
    }

    func testDevicesFIFOsAndDirectoriesAreRefusedByWhatTheyAre() throws {
        let fifo = directory + "/fifo"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        XCTAssertEqual(readFailure("/dev/zero"), .notRegular(.characterDevice))
        XCTAssertEqual(readFailure(fifo), .notRegular(.fifo), "and no wait for a writer")
        XCTAssertEqual(readFailure(directory), .notRegular(.directory))
        XCTAssertEqual(UserFile.ReadFailure.notRegular(.fifo).description, "is a FIFO, not a regular file; give a file")
        XCTAssertEqual(UserFile.ReadFailure.notRegular(.characterDevice).description, "is a character device, not a regular file; give a file")
    }

    /// A regular file is replaced whole, through a link the link stays, and no temporary file is left.
    func testARegularFileIsReplacedWholeBesideItself() throws {
        let path = directory + "/out.svg", link = directory + "/link.svg"
        XCTAssertNil(writeFailure(path, "first"))
        XCTAssertEqual(chmod(path, 0o640), 0)
        XCTAssertEqual(symlink(path, link), 0)
        XCTAssertNil(writeFailure(link, "second"))
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "second")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link), path, "the link is kept")
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue, 0o640, "its mode is kept")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).sorted(), ["link.svg", "out.svg"])
        XCTAssertEqual(writeFailure(directory + "/no/such/out.svg"), .missingFolder(directory + "/no/such"))
        // Not committed: nothing under the name, no temporary file left behind.
        do { let output = try UserFile.Output(path: directory + "/abandoned"); try output.write(Array("x".utf8)) }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).sorted(), ["link.svg", "out.svg"])
    }

    /// A recording (`record -o`) streams: what is written is in the file at once, uncommitted or
    /// not, as `tail -f` and a killed padgate need; a directory is still refused, a device still
    /// written into rather than replaced.
    func testAStreamIsWrittenInPlaceAsItComes() throws {
        let path = directory + "/pad.hid"
        XCTAssertNil(writeFailure(path, "an older recording, longer than the new one"))
        let stream = try UserFile.Output(path: path, mode: .stream)
        try stream.write(Array("D: 0\n".utf8))
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "D: 0\n", "readable before the end, the old one truncated")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), ["pad.hid"], "no temporary file beside it")
        XCTAssertThrowsError(try UserFile.Output(path: directory, mode: .stream))
        let null = try UserFile.Output(path: "/dev/null", mode: .stream)
        try null.write(Array("x".utf8))
        XCTAssertEqual(kind("/dev/null"), .characterDevice)
    }

    func testADirectoryIsRefused() {
        XCTAssertEqual(writeFailure(directory), .notWritable(.directory))
        XCTAssertEqual(kind(directory), .directory)
    }

    /// A FIFO is written into, not renamed over: the reader gets the bytes and the FIFO stays one.
    func testAFIFOIsWrittenStraightInto() throws {
        let fifo = directory + "/fifo"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let received = LockedBox<Data?>(nil)
        let reader = Thread { received.withLock { $0 = readToEnd(fifo) } }
        reader.start()
        XCTAssertNil(writeFailure(fifo, "<svg/>"))
        for _ in 0..<500 where received.withLock({ $0 }) == nil { usleep(10_000) }
        XCTAssertEqual(received.withLock { $0 }.map { String(decoding: $0, as: UTF8.self) }, "<svg/>")
        XCTAssertEqual(kind(fifo), .fifo)
    }

    /// /dev/full takes the write and fails it (ENOSPC); it stays the character device it was.
    func testADeviceIsWrittenStraightIntoAndItsErrorReported() {
        XCTAssertEqual(kind("/dev/full"), .characterDevice)
        XCTAssertEqual(writeFailure("/dev/full"), .system(SystemCallError("write", errno: Errno(rawValue: ENOSPC))))
        XCTAssertEqual(kind("/dev/full"), .characterDevice)
        XCTAssertNil(writeFailure("/dev/null"))
        XCTAssertEqual(kind("/dev/null"), .characterDevice)
    }
}

