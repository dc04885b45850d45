import Foundation
import XCTest
@testable import HIDCodecs
import TestDecoders

/// The Bluetooth haptics report against its documented layout (docs/haptics.md: SAxense, punktfunk,
/// DS5Dongle and the pad's own descriptor agree), read back by a decoder written here, with a
/// CRC32 computed here bit by bit, not by padgate's encoder or zlib.
final class DualSenseHapticsTests: XCTestCase {
    func testAReportReadsBackAsItsDocumentedLayout() throws {
        let samples: [Int8] = (0..<64).map { Int8(truncatingIfNeeded: $0 * 3 - 90) }
        let report = DualSenseHapticsReport.encode(samples[...], sequence: 5, counter: 200)
        let decoded = try DualSenseHapticsReader.decode(report)
        XCTAssertEqual(decoded.sequence, 5)
        XCTAssertEqual(decoded.counter, 200)
        XCTAssertEqual(decoded.left, stride(from: 0, to: 64, by: 2).map { samples[$0] })
        XCTAssertEqual(decoded.right, stride(from: 1, to: 64, by: 2).map { samples[$0] })
        // Silence is a whole report of zero samples; the sequence keeps to its nibble.
        let silence = try DualSenseHapticsReader.decode(DualSenseHapticsReport.silence(sequence: 17, counter: 0))
        XCTAssertEqual(silence.sequence, 1)
        XCTAssertTrue((silence.left + silence.right).allSatisfy { $0 == 0 })
    }

    /// 150 Hz and 300 Hz at full scale keep their level through the box filter (sinc(150·16/48000)
    /// = 0.996, sinc(0.1) = 0.984) and their frequency; 1400 Hz, near the 1.5 kHz edge, comes out
    /// at the box filter's 0.68 (sin(π·1400·16/48000) / (16·sin(π·1400/48000))); DC and silence
    /// pass as they are.
    func testTheDecimatorKeepsTheCoilsBandAndLevel() {
        func decimate(_ hertz: Double, amplitude: Double = 1, seconds: Double = 0.5) -> [Int8] {
            var decimator = HapticsDecimator(), out: [Int8] = []
            for i in 0..<Int(48_000 * seconds) {
                let v = Int16((sin(2 * .pi * hertz * Double(i) / 48_000) * amplitude * 32767).rounded())
                if let s = decimator.push(left: v, right: Int16(clamping: -Int(v))) {
                    out.append(s.left)
                    XCTAssertEqual(Int(s.right), -Int(s.left), accuracy: 1)
                }
            }
            return out
        }
        func dominant(_ x: [Int8]) -> Double {
            var best = (hz: 0.0, power: 0.0)
            for hz in stride(from: 10.0, through: 1490, by: 10) {
                var re = 0.0, im = 0.0
                for (n, v) in x.enumerated() { re += Double(v) * cos(2 * .pi * hz * Double(n) / 3000); im += Double(v) * sin(2 * .pi * hz * Double(n) / 3000) }
                if re * re + im * im > best.power { best = (hz, re * re + im * im) }
            }
            return best.hz
        }
        for (hz, minimum) in [(150.0, 124), (300.0, 122)] {
            let out = decimate(hz)
            XCTAssertEqual(out.count, 1500)
            XCTAssertGreaterThanOrEqual(Int(out.map { abs(Int($0)) }.max()!), minimum, "\(hz) Hz")
            XCTAssertLessThanOrEqual(Int(out.map { abs(Int($0)) }.max()!), 127)
            XCTAssertEqual(dominant(out), hz, "\(hz) Hz")
        }
        XCTAssertEqual(decimate(0, amplitude: 0).allSatisfy { $0 == 0 }, true)
        var dc = HapticsDecimator(), last: Int8 = 0
        for _ in 0..<32 { if let s = dc.push(left: 16384, right: -32768) { last = s.left; XCTAssertEqual(s.right, -127) } }
        XCTAssertEqual(last, 64, "half scale is 63.5, rounded away from zero")
        let edge = Int(decimate(1400).map { abs(Int($0)) }.max()!)
        XCTAssertTrue((80...90).contains(edge), "1400 Hz peaks at \(edge), not 0.68 × 127 = 86")
    }

    /// Report 0x36 read back by the decoder written from DS5Dongle's layout (TestDecoders): every
    /// header, the CRC, the coils' samples, the speaker's 200 bytes and the volume it sets; it
    /// shares the 0x32 stream's numbering.
    func testSpeakerReportsLayoutCRCAndNumbering() throws {
        var stream = DualSenseHapticsReport.Stream()
        var report = [UInt8](repeating: 0xEE, count: DualSenseSpeakerReport.length)
        let samples = (0..<64).map { Int8(truncatingIfNeeded: $0 * 3 - 90) }
        let opus = (0..<200).map { UInt8(truncatingIfNeeded: $0 * 7 + 1) }
        var haptics = [UInt8](repeating: 0, count: DualSenseHapticsReport.length)
        samples.withUnsafeBufferPointer { stream.fill(&haptics, samples: $0) }
        samples.withUnsafeBufferPointer { s in opus.withUnsafeBufferPointer { stream.fill(&report, samples: s, speaker: $0) } }
        let first = try DualSenseHapticsReader.decode(haptics)
        let decoded = try DualSenseSpeakerReader.decode(report)
        XCTAssertEqual(decoded.counter, first.counter &+ 1, "one count across 0x32 and 0x36")
        XCTAssertEqual(decoded.sequence, (first.sequence + 1) & 0x0F)
        XCTAssertEqual(decoded.left, stride(from: 0, to: 64, by: 2).map { samples[$0] })
        XCTAssertEqual(decoded.right, stride(from: 1, to: 64, by: 2).map { samples[$0] })
        XCTAssertEqual(decoded.opus, opus)
        XCTAssertEqual(decoded.validFlag0, 0x20, "only the speaker volume is taken from the state block")
        XCTAssertTrue((0x3D...0x64).contains(decoded.speakerVolume), "within the pad's speaker range")
        // A short Opus packet is padded with zeros; a flipped byte fails the CRC.
        samples.withUnsafeBufferPointer { s in opus.withUnsafeBufferPointer { stream.fill(&report, samples: s, speaker: UnsafeBufferPointer(rebasing: $0[0..<10])) } }
        XCTAssertEqual(try DualSenseSpeakerReader.decode(report).opus, Array(opus[0..<10]) + [UInt8](repeating: 0, count: 190))
        report[200] ^= 1
        XCTAssertThrowsError(try DualSenseSpeakerReader.decode(report))
    }

    /// 512 frames squeezed to 480 keep their cycles (the pad plays them back over 512 frames'
    /// time): 1 kHz over a report's 10.667 ms is 10.67 cycles in 480 frames; a level stays put.
    func testASlotIsSqueezedTo480FramesKeepingItsCycles() {
        let slot = (0..<512).flatMap { i -> [Int16] in
            let s = Int16(sin(2 * .pi * 1000 * Double(i) / 48_000) * 20_000)
            return [s, -s]
        }
        var frame = [Int16](repeating: 0, count: 960)
        slot.withUnsafeBufferPointer { s in frame.withUnsafeMutableBufferPointer { DualSenseSpeakerReport.squeeze(s, into: $0) } }
        let left = stride(from: 0, to: 960, by: 2).map { frame[$0] }
        let rising = zip(left, left.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        XCTAssertEqual(rising, 10, "10.67 cycles: 10 whole rising crossings")
        XCTAssertEqual(Double(left.map { abs(Int($0)) }.max()!), 20_000, accuracy: 200)
        XCTAssertEqual(stride(from: 1, to: 960, by: 2).map { frame[$0] }, left.map { -$0 }, "channels kept apart")
        // Position k × 16/15: frame 15 is slot frame 16, exactly.
        XCTAssertEqual(frame[2 * 15], slot[2 * 16])
        let flat = [Int16](repeating: 1234, count: 1024)
        flat.withUnsafeBufferPointer { s in frame.withUnsafeMutableBufferPointer { DualSenseSpeakerReport.squeeze(s, into: $0) } }
        XCTAssertTrue(frame.allSatisfy { $0 == 1234 })
    }
}
