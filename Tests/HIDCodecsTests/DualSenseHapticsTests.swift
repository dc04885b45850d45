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
}
