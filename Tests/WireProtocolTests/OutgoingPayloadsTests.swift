import XCTest
@testable import WireProtocol

final class OutgoingPayloadsTests: XCTestCase {
    func drained(_ outbox: inout OutgoingPayloads) -> [[UInt8]] {
        var payloads: [[UInt8]] = []
        outbox.drain { payloads.append(Array($0)) }
        return payloads
    }

    func decoded(_ payloads: [[UInt8]]) -> ([WireMessage], WireCodec.Counters) {
        var counters = WireCodec.Counters(), messages: [WireMessage] = []
        for payload in payloads { payload.withUnsafeBytes { WireCodec.decode($0, counters: &counters) { messages.append($0) } } }
        return (messages, counters)
    }

    func encoded(_ messages: [WireMessage]) throws -> [UInt8] {
        try WireCodecTests.encode(messages, capacity: OutgoingPayloads.payloadCapacity)
    }

    func sample(_ i: Int) -> WireMotionSample {
        WireMotionSample(timestampMicros: UInt32(i * 4000), gyroX: Float(i), gyroY: -Float(i), gyroZ: 0.5, accelX: 0, accelY: 1, accelZ: Float(i) / 100)
    }

    /// Typed appends and `WireMessage` appends write the same bytes as the codec does, in order.
    func testEveryMessageComesOutAsTheCodecWritesIt() throws {
        var outbox = OutgoingPayloads()
        for message in WireCodecTests.everyMessage { outbox.append(message) }
        let payloads = drained(&outbox)
        XCTAssertEqual(payloads.count, 1)
        XCTAssertEqual(payloads.first, try encoded(WireCodecTests.everyMessage))

        let state = PadStateSnapshot(slot: PadSlot(1), sequence: WireSequence(7), buttons: 5, dpad: 2, leftX: -3, l2: 9)
        let touch = TouchSnapshot(slot: PadSlot(1), sequence: WireSequence(3), first: WireTouchContact(id: 4, active: true, x: 100, y: 200))
        let battery = BatteryReport(slot: PadSlot(1), percent: 80, state: 1)
        outbox.append(state); outbox.append(touch); outbox.append(battery)
        XCTAssertEqual(drained(&outbox), [try encoded([.state(state), .touch(touch), .battery(battery)])])
    }

    /// Up to four samples of one pad share a message; a fifth, another pad's sample or any other
    /// message closes it.
    func testMotionSamplesAreGatheredFourToAMessagePerPad() throws {
        var outbox = OutgoingPayloads()
        for i in 0..<6 { outbox.appendMotion(sample(i), slot: PadSlot(0)) }
        outbox.appendMotion(sample(6), slot: PadSlot(1))
        outbox.append(PadStateSnapshot.neutral(PadSlot(0)))
        outbox.appendMotion(sample(7), slot: PadSlot(1))
        let (messages, counters) = decoded(drained(&outbox))
        XCTAssertEqual(counters.malformed, 0)
        var expected: [WireMessage] = []
        for (slot, range) in [(PadSlot(0), 0..<4), (PadSlot(0), 4..<6), (PadSlot(1), 6..<7)] {
            var batch = MotionBatch(slot: slot)
            for i in range { _ = batch.append(sample(i)) }
            expected.append(.motion(batch))
        }
        expected.append(.state(.neutral(PadSlot(0))))
        var last = MotionBatch(slot: PadSlot(1)); _ = last.append(sample(7))
        expected.append(.motion(last))
        XCTAssertEqual(messages, expected)
    }

    /// More than a payload holds: every message arrives, in order, in payloads that each fit, and
    /// none is split; the storage grows for a pass that needs it and is reused after.
    func testOverflowStartsTheNextPayloadAndLosesNothing() {
        var outbox = OutgoingPayloads(payloads: 1)
        var expected: [WireMessage] = []
        for round in 0..<3 {
            expected.removeAll()
            for i in 0..<300 {
                let state = PadStateSnapshot(slot: PadSlot(UInt8(i % 16)), sequence: WireSequence(UInt16(i)), buttons: UInt32(i % 1000))
                outbox.append(state)
                expected.append(.state(state))
                outbox.appendMotion(sample(i), slot: PadSlot(UInt8(i % 16)))
                var batch = MotionBatch(slot: PadSlot(UInt8(i % 16))); _ = batch.append(sample(i))
                expected.append(.motion(batch))
            }
            let payloads = drained(&outbox)
            XCTAssertGreaterThan(payloads.count, 10, "round \(round)")
            XCTAssertTrue(payloads.allSatisfy { $0.count <= OutgoingPayloads.payloadCapacity && $0.first == wireVersion })
            let (messages, counters) = decoded(payloads)
            XCTAssertEqual(counters.malformed, 0)
            XCTAssertEqual(messages, expected, "round \(round)")
        }
        XCTAssertTrue(outbox.isEmpty)
        XCTAssertEqual(drained(&outbox), [], "an empty outbox sends nothing")
    }

    /// A motion message that no longer fits its payload moves whole to the next one.
    func testAMotionRunCrossesIntoTheNextPayloadWhole() {
        var outbox = OutgoingPayloads()
        let name = String(repeating: "n", count: 60)
        // Fill a payload almost to the end with arrivals, then stream motion across the boundary.
        for _ in 0..<6 { outbox.append(PadArrival(slot: PadSlot(0), type: .dualSense, vendorID: 1, productID: 2, capabilities: [], name: name,
                                                  identity: PadIdentity(calibration: FeatureReportBytes([UInt8](repeating: 1, count: 64))!,
                                                                        firmware: FeatureReportBytes([UInt8](repeating: 2, count: 64))!))) }
        for i in 0..<40 { outbox.appendMotion(sample(i), slot: PadSlot(0)) }
        let payloads = drained(&outbox)
        XCTAssertEqual(payloads.count, 2)
        let (messages, counters) = decoded(payloads)
        XCTAssertEqual(counters.malformed, 0)
        let samples = messages.flatMap { message -> [WireMotionSample] in
            guard case .motion(let batch) = message else { return [] }
            return (0..<batch.count).map { batch[$0] }
        }
        XCTAssertEqual(samples, (0..<40).map(sample))
    }
}
