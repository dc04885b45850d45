import HIDCodecs
import WireProtocol
import XCTest
@testable import PadFamilies

/// The host's side of haptics without a device: the USB pad's isochronous OUT payloads (4
/// channels of 16-bit little-endian at 48 kHz) as a game's audio stack sends them, in packets of
/// any size, become numbered 5 ms blocks of the coil channels at 3 kHz.
final class HostCoilCaptureTests: XCTestCase {
    /// 48 kHz frames: headphones (0-1) loud noise that must not leak, coils (2-3) as given.
    static func payload(frames: Range<Int>, coil: (Int) -> (Int16, Int16)) -> [UInt8] {
        var bytes: [UInt8] = []
        for f in frames {
            let (l, r) = coil(f)
            for sample in [Int16(truncatingIfNeeded: f &* 7919), Int16(truncatingIfNeeded: f &* 104_729), l, r] {
                bytes += [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8)]
            }
        }
        return bytes
    }

    func drain(_ capture: HostCoilCapture) -> [HapticsBlock] {
        var messages: [WireMessage] = []
        capture.drain(into: &messages)
        return messages.compactMap { if case .haptics(let block) = $0 { block } else { nil } }
    }

    func testTheCoilChannelsBecomeNumberedBlocksAt3kHzWhateverThePacketSizes() {
        let capture = HostCoilCapture(slot: PadSlot(3))
        // A ramp on the left coil (each 16-frame group at one level), its negative on the right.
        let coil: (Int) -> (Int16, Int16) = { f in let v = Int16((f / 16) % 200 * 160 - 16_000); return (v, -v) }
        let bytes = Self.payload(frames: 0..<2400, coil: coil)  // 50 ms
        // Packets of 1 ms (48 frames), then odd sizes that split frames.
        var offset = 0, sizes = [384, 384, 7, 1, 500, 13, 384]
        while offset < bytes.count {
            let size = min(sizes.removeFirst(), bytes.count - offset)
            sizes.append(size)
            bytes[offset..<offset + size].withUnsafeBytes { capture.take($0) }
            offset += size
        }
        let blocks = drain(capture)
        XCTAssertEqual(blocks.count, 10, "50 ms is ten 5 ms blocks")
        XCTAssertEqual(blocks.map(\.sequence.rawValue), Array(0..<10))
        XCTAssertTrue(blocks.allSatisfy { $0.slot == PadSlot(3) })
        for (n, block) in blocks.enumerated() {
            for i in 0..<HapticsBlock.frames {
                let group = n * HapticsBlock.frames + i   // each 3 kHz frame is one 16-frame group
                let level = Double(group % 200 * 160 - 16_000)
                // The documented scale: ±32767 to ±127, rounded (docs/haptics.md).
                let expected = Int8((level * 127 / 32767).rounded())
                XCTAssertEqual(block[2 * i], expected, "block \(n) frame \(i)")
                XCTAssertEqual(block[2 * i + 1], -expected)
            }
        }
    }

    func testSilenceAfterSilenceIsNotSentButKeepsItsNumber() {
        let capture = HostCoilCapture(slot: PadSlot(0))
        // 5 ms sound, 20 ms silence, 5 ms sound.
        let bytes = Self.payload(frames: 0..<1440) { f in (f < 240 || f >= 1200) ? (8000, 8000) : (0, 0) }
        bytes.withUnsafeBytes { capture.take($0) }
        let blocks = drain(capture)
        XCTAssertEqual(blocks.map(\.sequence.rawValue), [0, 1, 5], "sound, the first silent block, then sound at its own place")
        XCTAssertTrue(blocks[1].isSilent)
        XCTAssertFalse(blocks[2].isSilent)
    }

    func testAStalledReaderLosesTheOldestBlocksAndNeverGrows() {
        let capture = HostCoilCapture(slot: PadSlot(0))
        let bytes = Self.payload(frames: 0..<(240 * 100)) { _ in (1000, -1000) }
        bytes.withUnsafeBytes { capture.take($0) }
        let blocks = drain(capture)
        XCTAssertEqual(blocks.count, HostCoilCapture.capacity)
        XCTAssertEqual(blocks.first?.sequence.rawValue, UInt16(100 - HostCoilCapture.capacity), "the newest are kept")
        XCTAssertEqual(capture.dropped, 100 - HostCoilCapture.capacity)
        XCTAssertTrue(drain(capture).isEmpty)
    }
}
