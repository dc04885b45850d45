import Foundation
import MonotonicTime
import PadDevices
@testable import PadFamilies
import WireProtocol
import XCTest

/// The host pad's microphone on simulated time: it asks its client only while a program records
/// (IN packets are taken), renews the lease while that goes on, says stop once it ended, and fills
/// the packets with the client's frames (silence without them).
final class HostMicrophoneTests: XCTestCase {
    let t0 = MonotonicInstant.origin + .seconds(100)

    var sequences: [UInt16] = []

    func requests(_ microphone: HostMicrophone, at now: MonotonicInstant) -> [UInt16] {
        var messages: [WireMessage] = []
        microphone.takeRequests(into: &messages, now: now)
        let requests = messages.compactMap { if case .microphoneRequest(let r) = $0 { r } else { nil } }
        sequences += requests.map(\.sequence.rawValue)
        return requests.map(\.ttlMillis)
    }

    func fill(_ microphone: HostMicrophone, at now: MonotonicInstant) -> [Int16] {
        var packet = [UInt8](repeating: 0xAA, count: 192)
        packet.withUnsafeMutableBytes { microphone.fill($0, at: now) }
        return stride(from: 0, to: packet.count, by: 2).map { Int16(bitPattern: UInt16(packet[$0]) | UInt16(packet[$0 + 1]) << 8) }
    }

    func testItAsksOnlyWhileAProgramRecordsRenewsAndStops() throws {
        let microphone = try HostMicrophone(slot: PadSlot(2))
        XCTAssertEqual(requests(microphone, at: t0), [], "nobody records: nothing asked")
        XCTAssertNil(microphone.nextDeadline)
        // A program records: a packet a millisecond.
        var now = t0
        XCTAssertEqual(fill(microphone, at: now), [Int16](repeating: 0, count: 96), "silence before any frame")
        XCTAssertEqual(requests(microphone, at: now), [2000], "a 2 s lease at the first packet")
        XCTAssertEqual(requests(microphone, at: now + .milliseconds(1)), [], "asked once")
        var asked: [UInt16] = []
        for _ in 0..<1200 {
            now = now + .milliseconds(1)
            _ = fill(microphone, at: now)
            asked += requests(microphone, at: now)
        }
        XCTAssertEqual(asked, [2000, 2000], "renewed every 500 ms while recording goes on")
        // The recording stops: the stop goes at the deadline, once.
        let deadline = try XCTUnwrap(microphone.nextDeadline)
        XCTAssertLessThanOrEqual(deadline - now, .milliseconds(200))
        XCTAssertEqual(requests(microphone, at: now + .milliseconds(100)), [], "still recording for all it knows")
        XCTAssertEqual(requests(microphone, at: now + .milliseconds(201)), [0], "no packet for 200 ms: stop")
        XCTAssertEqual(requests(microphone, at: now + .milliseconds(900)), [])
        XCTAssertNil(microphone.nextDeadline)
        XCTAssertEqual(sequences, [0, 1, 2, 3], "numbered, so a renewal overtaken by the stop is older")
    }

    func testTheClientsFramesFillThePacketsAtTheirPlace() throws {
        let microphone = try HostMicrophone(slot: PadSlot(0))
        let encoder = try OpusEncoder()
        // 100 ms of a 1 kHz tone at 12,000, as the client sends it: 5 ms frames, once asked.
        var packet = [UInt8](repeating: 0, count: Opus.maximumPacket)
        var now = t0
        let early = try XCTUnwrap(MicrophoneFrame(slot: PadSlot(0), sequence: WireSequence(0), packet: [0xFC, 0xFF, 0xFE]))
        microphone.receive(early, at: t0)
        XCTAssertEqual(microphone.unaskedFrames, 1, "a frame nobody asked for is dropped")
        _ = fill(microphone, at: t0)
        XCTAssertEqual(requests(microphone, at: t0), [2000])
        for n in 0..<20 {
            let pcm = (0..<Opus.frameSamples).flatMap { i -> [Int16] in
                let s = Int16(sin(2 * .pi * 1000 * Double(n * Opus.frameSamples + i) / 48_000) * 12_000)
                return [s, s]
            }
            let length = try pcm.withUnsafeBufferPointer { pcm in try packet.withUnsafeMutableBufferPointer { try encoder.encode(pcm, into: $0) } }
            microphone.receive(try XCTUnwrap(MicrophoneFrame(slot: PadSlot(0), sequence: WireSequence(UInt16(n)), packet: Array(packet.prefix(length)))),
                               at: t0 + .milliseconds(5 * n))
        }
        XCTAssertEqual(microphone.framesReceived, 20)
        // The packets taken from the first frame's arrival on: the tone, after the playout's lead.
        var samples: [Int16] = []
        for _ in 0..<120 {
            samples += fill(microphone, at: now)
            now = now + .milliseconds(1)
        }
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let peak = left.map { abs(Int($0)) }.max() ?? 0
        XCTAssertEqual(Double(peak), 12_000, accuracy: 2_500, "the tone's level")
        let rising = zip(left, left.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        XCTAssertGreaterThanOrEqual(rising, 60, "about one rising crossing a millisecond for the ~80 ms placed")
        XCTAssertLessThanOrEqual(rising, 101)
        // A packet that is not whole frames is written whole: no stale byte reaches the kernel.
        var odd = [UInt8](repeating: 0xAA, count: 7)
        odd.withUnsafeMutableBytes { microphone.fill($0, at: t0 + .seconds(3)) }
        XCTAssertEqual(odd, [UInt8](repeating: 0, count: 7))
        // Long after the last frame: silence again (a dead client leaves the host pad silent).
        XCTAssertEqual(fill(microphone, at: t0 + .seconds(2)), [Int16](repeating: 0, count: 96))
    }
}
