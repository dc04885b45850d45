import Foundation
import HIDCodecs
import PadDevices
import WireProtocol
import XCTest
@testable import PadFamilies

/// The host's side of haptics without a device: the USB pad's isochronous OUT payloads (4
/// channels of 16-bit little-endian at 48 kHz) as a game's audio stack sends them, in packets of
/// any size, become numbered 5 ms blocks of the coil channels at 3 kHz.
final class HostAudioCaptureTests: XCTestCase {
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

    func drain(_ capture: HostAudioCapture) -> [HapticsBlock] {
        var messages: [WireMessage] = []
        capture.drain(into: &messages)
        return messages.compactMap { if case .haptics(let block) = $0 { block } else { nil } }
    }

    func testTheCoilChannelsBecomeNumberedBlocksAt3kHzWhateverThePacketSizes() {
        let capture = HostAudioCapture(slot: PadSlot(3))
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
        let capture = HostAudioCapture(slot: PadSlot(0))
        // 5 ms sound, 20 ms silence, 5 ms sound.
        let bytes = Self.payload(frames: 0..<1440) { f in (f < 240 || f >= 1200) ? (8000, 8000) : (0, 0) }
        bytes.withUnsafeBytes { capture.take($0) }
        let blocks = drain(capture)
        XCTAssertEqual(blocks.map(\.sequence.rawValue), [0, 1, 5], "sound, the first silent block, then sound at its own place")
        XCTAssertTrue(blocks[1].isSilent)
        XCTAssertFalse(blocks[2].isSilent)
    }

    /// Each block sent carries a copy of the one before where that was sent too, so a single lost
    /// datagram costs nothing: a click's host silent block carries the click. A burst after
    /// silence that was not sent carries none (a copy from before the silence would be stale).
    func testEachBlockCarriesACopyOfTheOneBeforeWhenThatWasSent() {
        let capture = HostAudioCapture(slot: PadSlot(0))
        // 10 ms sound, 20 ms silence, 5 ms sound, 5 ms silence.
        let bytes = Self.payload(frames: 0..<1920) { f in (f < 480 || (1440..<1680).contains(f)) ? (Int16(f), 8000) : (0, 0) }
        bytes.withUnsafeBytes { capture.take($0) }
        let blocks = drain(capture)
        XCTAssertEqual(blocks.map(\.sequence.rawValue), [0, 1, 2, 6, 7])
        XCTAssertEqual(blocks.map(\.carriesPrevious), [false, true, true, false, true])
        for (n, block) in blocks.enumerated() where block.carriesPrevious {
            let before = blocks[n - 1]
            XCTAssertEqual(block.withPreviousSamples { Array($0) }, before.withSamples { Array($0) }, "block \(block.sequence.rawValue)")
        }
        XCTAssertTrue(blocks[4].isSilent, "the host's silent block after the click carries the click")
        XCTAssertFalse(blocks[4].withPreviousSamples { $0.allSatisfy { $0 == 0 } } ?? true)
    }

    func testAStalledReaderLosesTheOldestBlocksAndNeverGrows() {
        let capture = HostAudioCapture(slot: PadSlot(0))
        let bytes = Self.payload(frames: 0..<(240 * 100)) { _ in (1000, -1000) }
        bytes.withUnsafeBytes { capture.take($0) }
        let blocks = drain(capture)
        XCTAssertEqual(blocks.count, HostAudioCapture.capacity)
        XCTAssertEqual(blocks.first?.sequence.rawValue, UInt16(100 - HostAudioCapture.capacity), "the newest are kept")
        XCTAssertEqual(capture.dropped, 100 - HostAudioCapture.capacity)
        XCTAssertTrue(drain(capture).isEmpty)
    }

    // MARK: The speaker pair

    /// 48 kHz frames with a 1 kHz tone at 20,000 on the speaker pair (0-1) for `tone` frames, then
    /// silence; the coils silent.
    static func speakerPayload(frames: Range<Int>, tone: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for f in frames {
            let s = f < tone ? Int16(sin(2 * .pi * 1000 * Double(f) / 48_000) * 20_000) : 0
            for sample in [s, s, 0, 0] { bytes += [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8)] }
        }
        return bytes
    }

    /// Where the client asked for it, the speaker pair becomes numbered 5 ms Opus frames that
    /// libopus decodes back to the tone (its period and level); silence after silence is not
    /// sent but keeps its number; where the client did not ask, nothing of it is sent.
    func testTheSpeakerPairBecomesNumberedOpusFramesWhereTheClientAsked() throws {
        let bytes = Self.speakerPayload(frames: 0..<(48 * 60), tone: 48 * 40)   // 40 ms of tone, 20 ms of silence
        let capture = HostAudioCapture(slot: PadSlot(1), speaker: true)
        XCTAssertTrue(capture.capturesSpeaker)
        for start in stride(from: 0, to: bytes.count, by: 384) { bytes[start..<min(start + 384, bytes.count)].withUnsafeBytes { capture.take($0) } }
        var messages: [WireMessage] = []
        capture.drain(into: &messages)
        let frames = messages.compactMap { if case .speaker(let f) = $0 { f } else { nil } }
        XCTAssertEqual(frames.map(\.sequence.rawValue), Array(0..<9), "eight frames of tone and one of silence; the three after it not sent")
        XCTAssertTrue(frames.allSatisfy { $0.slot == PadSlot(1) && $0.packet.count <= SpeakerFrame.maximumPacket })
        let decoder = try OpusDecoder()
        var decoded: [Int16] = []
        var pcm = [Int16](repeating: 0, count: 2 * Opus.frameSamples)
        for frame in frames.prefix(8) {
            try pcm.withUnsafeMutableBufferPointer { out in try frame.packet.withUnsafeBytes { try decoder.decode($0, into: out) } }
            decoded += pcm
        }
        // After the codec's start (its first 5 ms), the tone: 1 kHz, a rising crossing every 48 frames, near its level.
        let left = stride(from: 2 * Opus.frameSamples, to: decoded.count, by: 2).map { Int(decoded[$0]) }
        let rising = zip(left, left.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        XCTAssertEqual(Double(rising), Double(left.count) / 48, accuracy: 1.5)
        XCTAssertEqual(Double(left.map(abs).max() ?? 0), 20_000, accuracy: 3_000)

        let without = HostAudioCapture(slot: PadSlot(1))
        bytes.withUnsafeBytes { without.take($0) }
        messages.removeAll()
        without.drain(into: &messages)
        XCTAssertFalse(messages.contains { if case .speaker = $0 { true } else { false } }, "no speaker frame for a client that did not ask")
    }
}
