import Feedback
import XCTest

/// WAV files as `padgate haptics` reads them: the coils' two channels from 1, 2 or 4, and every
/// malformed or hostile file an error that names the problem.
final class WAVFileTests: XCTestCase {
    static func wav(channels: Int, rate: Int = 48_000, bits: Int = 16, frames: [[Int16]], dataSize: Int? = nil, format: Int = 1) -> [UInt8] {
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        let data = frames.flatMap { $0.flatMap { le(Int($0), 2) } }
        let fmt = le(format, 2) + le(channels, 2) + le(rate, 4) + le(rate * channels * bits / 8, 4) + le(channels * bits / 8, 2) + le(bits, 2)
        let body = Array("WAVE".utf8) + Array("fmt ".utf8) + le(16, 4) + fmt + Array("LIST".utf8) + le(3, 4) + [1, 2, 3, 0]
            + Array("data".utf8) + le(dataSize ?? data.count, 4) + data
        return Array("RIFF".utf8) + le(body.count, 4) + body
    }

    func testMonoStereoAndTheFourChannelLayout() throws {
        XCTAssertEqual(try WAVFile(bytes: Self.wav(channels: 1, frames: [[7], [-8]])).coilSamples, [7, 7, -8, -8])
        XCTAssertEqual(try WAVFile(bytes: Self.wav(channels: 2, frames: [[1, 2], [3, 4]])).coilSamples, [1, 2, 3, 4])
        // The pad's own layout: headphones on 0-1, the coils on 2-3 (an odd-sized chunk before
        // the data is skipped with its pad byte).
        let four = try WAVFile(bytes: Self.wav(channels: 4, frames: [[100, 200, -5, 6], [0, 0, 32767, -32768]]))
        XCTAssertEqual(four.coilSamples, [-5, 6, 32767, -32768])
        XCTAssertEqual(four.frameCount, 2)
        // A recording cut short keeps the whole frames it has.
        XCTAssertEqual(try WAVFile(bytes: Self.wav(channels: 2, frames: [[1, 2], [3, 4]], dataSize: 1000)).coilSamples, [1, 2, 3, 4])
    }

    func testWhatIsNotTheCoilsSignalIsRefusedByName() {
        func failure(_ bytes: [UInt8]) -> WAVFile.Failure? {
            do { _ = try WAVFile(bytes: bytes); return nil } catch { return error }
        }
        XCTAssertEqual(failure(Array("RIFF....AVI ".utf8)), .notWAV)
        XCTAssertEqual(failure([]), .notWAV)
        if case .unsupported(let why)? = failure(Self.wav(channels: 2, rate: 44_100, frames: [[0, 0]])) { XCTAssertTrue(why.contains("44100 Hz")) } else { XCTFail() }
        if case .unsupported(let why)? = failure(Self.wav(channels: 2, bits: 8, frames: [])) { XCTAssertTrue(why.contains("8-bit")) } else { XCTFail() }
        if case .unsupported(let why)? = failure(Self.wav(channels: 3, frames: [[0, 0, 0]])) { XCTAssertTrue(why.contains("3 channels")) } else { XCTFail() }
        if case .unsupported? = failure(Self.wav(channels: 2, frames: [], format: 3)) {} else { XCTFail("float samples") }
        // A chunk claiming more than the file holds, before any data: an error, not a read past the end.
        var lying = Self.wav(channels: 2, frames: [[1, 1]])
        lying.replaceSubrange(16..<20, with: [0xff, 0xff, 0xff, 0x7f])
        if case .truncated? = failure(lying) {} else { XCTFail("\(String(describing: failure(lying)))") }
        // Headers only, no data chunk.
        XCTAssertEqual(failure(Array(Self.wav(channels: 2, frames: []).prefix(36))), .truncated("header: no data chunk"))
        XCTAssertEqual(failure([UInt8](repeating: 0, count: WAVFile.maximumBytes + 1)), .tooLarge(WAVFile.maximumBytes + 1))
    }

    /// Every prefix and a run of byte flips of a good file: an answer or an error, never a trap.
    func testEveryTruncationAndCorruptionIsAnErrorOrAnAnswer() {
        let good = Self.wav(channels: 4, frames: (0..<20).map { [Int16($0), 1, 2, 3] })
        for n in 0...good.count { _ = try? WAVFile(bytes: Array(good.prefix(n))) }
        for i in 0..<good.count { for value: UInt8 in [0, 0x7f, 0xff] { var bad = good; bad[i] = value; _ = try? WAVFile(bytes: bad) } }
    }
}

/// What plays nothing, or would play float bits as PCM, is refused by name (issue 39).
final class WAVFileFormatTests: XCTestCase {
    /// A WAVE_FORMAT_EXTENSIBLE file: its samples' kind is its subformat's tag.
    static func extensible(subformat: Int, bits: Int = 16) -> [UInt8] {
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        let fmt = le(0xFFFE, 2) + le(2, 2) + le(48_000, 4) + le(48_000 * 4, 4) + le(4, 2) + le(bits, 2)
            + le(22, 2) + le(bits, 2) + le(3, 4) + le(subformat, 2) + [0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71]
        let data = le(5, 2) + le(-6, 2)
        let body = Array("WAVE".utf8) + Array("fmt ".utf8) + le(fmt.count, 4) + fmt + Array("data".utf8) + le(data.count, 4) + data
        return Array("RIFF".utf8) + le(body.count, 4) + body
    }

    func failure(_ bytes: [UInt8]) -> WAVFile.Failure? {
        do { _ = try WAVFile(bytes: bytes); return nil } catch { return error }
    }

    func testFloatMarked16BitIsRefusedPlainOrExtensible() {
        XCTAssertEqual(failure(WAVFileTests.wav(channels: 2, frames: [[1, 2]], format: 3)), .unsupported("IEEE float samples are not 16-bit PCM"))
        XCTAssertEqual(failure(Self.extensible(subformat: 3)), .unsupported("IEEE float samples are not 16-bit PCM"))
        XCTAssertEqual(try WAVFile(bytes: Self.extensible(subformat: 1)).coilSamples, [5, -6], "extensible PCM plays")
        // An extensible chunk cut to 16 bytes says nothing of its samples.
        var short = WAVFileTests.wav(channels: 2, frames: [[1, 2]])
        short[20] = 0xFE; short[21] = 0xFF
        if case .unsupported? = failure(short) {} else { XCTFail("\(String(describing: failure(short)))") }
    }

    func testAnEmptyDataChunkIsNoSamples() {
        XCTAssertEqual(failure(WAVFileTests.wav(channels: 2, frames: [])), .noSamples)
        XCTAssertEqual(failure(WAVFileTests.wav(channels: 4, frames: [[1, 2, 3]])), .noSamples, "less than one frame")
    }
}
