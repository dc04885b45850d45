import XCTest
import HIDCodecs
@testable import WireProtocol

/// Every field from the network is checked when decoded: what no honest peer sends is refused and
/// counted, and the rest of the payload still decodes.
final class WireLimitsTests: XCTestCase {
    /// Encodes `hostile` between two honest pings, then decodes: returns what decoded and the counters.
    func decode(_ hostile: WireMessage) throws -> (messages: [WireMessage], counters: WireCodec.Counters) {
        var buffer = [UInt8](repeating: 0, count: 1400)
        let count = try buffer.withUnsafeMutableBytes { raw in
            var w = WireWriter(raw)
            try WireCodec.beginPayload(&w)
            try WireCodec.encode(.ping(Probe(id: 1, sentMicros: 1)), into: &w)
            try WireCodec.encode(hostile, into: &w)
            try WireCodec.encode(.ping(Probe(id: 2, sentMicros: 2)), into: &w)
            return w.count
        }
        var counters = WireCodec.Counters()
        var messages: [WireMessage] = []
        buffer.withUnsafeBytes { WireCodec.decode(UnsafeRawBufferPointer(rebasing: $0[0..<count]), counters: &counters) { messages.append($0) } }
        return (messages, counters)
    }

    func assertRefused(_ message: WireMessage, file: StaticString = #filePath, line: UInt = #line) throws {
        let (messages, counters) = try decode(message)
        XCTAssertEqual(counters.malformed, 1, "\(message)", file: file, line: line)
        XCTAssertEqual(messages, [.ping(Probe(id: 1, sentMicros: 1)), .ping(Probe(id: 2, sentMicros: 2))], "the rest decodes", file: file, line: line)
    }

    func assertAccepted(_ message: WireMessage, file: StaticString = #filePath, line: UInt = #line) throws {
        let (messages, counters) = try decode(message)
        XCTAssertEqual(counters.malformed, 0, "\(message)", file: file, line: line)
        XCTAssertEqual(messages.count, 3, file: file, line: line)
        XCTAssertEqual(messages[1], message, file: file, line: line)
    }

    func motion(_ sample: WireMotionSample) -> WireMessage {
        var batch = MotionBatch(slot: PadSlot(0))
        _ = batch.append(sample)
        return .motion(batch)
    }

    func testMotionMustBeFiniteAndPhysical() throws {
        for bad: Float in [.nan, .infinity, -.infinity, 1e30, WireLimits.maxGyroDegreesPerSecond.nextUp] {
            try assertRefused(motion(WireMotionSample(gyroY: bad)))
        }
        for bad: Float in [.nan, -.infinity, WireLimits.maxAccelG.nextUp] { try assertRefused(motion(WireMotionSample(accelZ: bad))) }
        try assertAccepted(motion(WireMotionSample(gyroX: -WireLimits.maxGyroDegreesPerSecond, accelZ: WireLimits.maxAccelG)))
    }

    func testSlotsTypesNamesAndButtons() throws {
        let arrival = PadArrival(slot: PadSlot(WireLimits.maxSlots - 1), type: .dualSenseEdge, vendorID: 0x054c, productID: 0x0df2, capabilities: [], name: "Edge")
        try assertAccepted(.arrival(arrival))
        var far = arrival; far.slot = PadSlot(WireLimits.maxSlots)
        try assertRefused(.arrival(far))
        var named = arrival; named.name = "pad\u{1b}[2J"
        try assertRefused(.arrival(named))
        try assertRefused(.state(PadStateSnapshot(slot: PadSlot(0), buttons: 1 << 25)))
        try assertAccepted(.state(PadStateSnapshot(slot: PadSlot(0), buttons: WireLimits.knownButtons)))
        // Every button a pad reports crosses: a Deck's thumb resting on a stick is its touch bit,
        // in nearly every report (refused once, as bits 20-24 were before they joined the table).
        for row in GamepadButtons.table {
            try assertAccepted(.state(PadStateSnapshot(slot: PadSlot(0), buttons: row.button.rawValue)))
        }
        try assertRefused(.removal(PadSlot(200)))
        // A trackpad pulse train lasts at most 2 s: a host cannot keep a pad buzzing by it.
        let pulse = TrackpadPulse(slot: PadSlot(0), sequence: WireSequence(1), side: .left, onMicros: 500, offMicros: 500, count: 2000, gain: 0)
        try assertAccepted(.trackpadPulse(pulse))
        var longer = pulse; longer.count = 2001
        try assertRefused(.trackpadPulse(longer))
        XCTAssertEqual(TrackpadPulse.largestCount(onMicros: 500, offMicros: 500), 2000)
        XCTAssertEqual(TrackpadPulse.largestCount(onMicros: 0, offMicros: 0), UInt16.max, "a train of nothing is no time")

        // An unknown pad type is refused, not taken for a generic pad.
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = try buffer.withUnsafeMutableBytes { raw in
            var w = WireWriter(raw)
            try WireCodec.beginPayload(&w)
            try WireCodec.encode(.arrival(arrival), into: &w)
            return w.count
        }
        buffer[5] = 0x77  // version, type, length u16, slot, then the pad type
        var counters = WireCodec.Counters()
        buffer.withUnsafeBytes { WireCodec.decode(UnsafeRawBufferPointer(rebasing: $0[0..<count]), counters: &counters) { _ in XCTFail("decoded") } }
        XCTAssertEqual(counters.malformed, 1)
    }

    func testTouchBatteryAndFeedbackRanges() throws {
        try assertAccepted(.touch(TouchSnapshot(slot: PadSlot(0), first: WireTouchContact(id: 127, active: true, x: 1919, y: 1079))))
        try assertRefused(.touch(TouchSnapshot(slot: PadSlot(0), first: WireTouchContact(id: 1, active: true, x: 1920, y: 0))))
        try assertRefused(.touch(TouchSnapshot(slot: PadSlot(0), second: WireTouchContact(id: 128, active: false, x: 0, y: 0))))
        try assertAccepted(.battery(BatteryReport(slot: PadSlot(0), percent: 100, state: WireLimits.maxChargingState)))
        try assertRefused(.battery(BatteryReport(slot: PadSlot(0), percent: 101, state: 0)))
        try assertRefused(.battery(BatteryReport(slot: PadSlot(0), percent: 50, state: 99)))
        try assertAccepted(.rumble(RumbleLease(slot: PadSlot(0), sequence: WireSequence(1), low: 1, high: 1, ttlMillis: WireLimits.maxRumbleTTLMillis)))
        try assertRefused(.rumble(RumbleLease(slot: PadSlot(0), sequence: WireSequence(1), low: 1, high: 1, ttlMillis: WireLimits.maxRumbleTTLMillis + 1)))
        var output = HIDOutputMessage(slot: PadSlot(0), sequence: WireSequence(1))
        output.fields = HIDOutputMessage.Fields(rawValue: 0x20)
        try assertRefused(.hidOutput(output))
        try assertRefused(.motionRate(MotionRateRequest(slot: PadSlot(0), hertz: WireLimits.maxMotionHertz + 1)))
    }

    func testProbesCarryTheirCountsAndPaddingAndAnOldPeersProbeStillReads() throws {
        try assertAccepted(.ping(Probe(id: 9, sentMicros: 5, figures: LinkFigures(roundTripMicros: 40_000, jitterMicros: 300, lossToHostPermille: 50, lossToClientPermille: 1000),
                                       padding: Probe.inputSizedPadding)))
        try assertAccepted(.pong(Probe(id: 9, sentMicros: 5, tally: PingTally(received: 3, highestID: 9, reordered: 1, duplicates: 2), padding: 40)))
        try assertRefused(.ping(Probe(id: 9, sentMicros: 5, figures: LinkFigures(lossToHostPermille: 1001))))
        XCTAssertGreaterThan(Probe.inputSizedPadding, 0, "a ping is padded up to an input datagram")
        // A peer before the trailing fields sends id and time alone: it reads with zero counts.
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = try buffer.withUnsafeMutableBytes { raw in
            var w = WireWriter(raw)
            try WireCodec.beginPayload(&w)
            try w.u8(WireMessageType.pong.rawValue); try w.u16(12); try w.u32(4); try w.u64(77)
            return w.count
        }
        var counters = WireCodec.Counters()
        var messages: [WireMessage] = []
        buffer.withUnsafeBytes { WireCodec.decode(UnsafeRawBufferPointer(rebasing: $0[0..<count]), counters: &counters) { messages.append($0) } }
        XCTAssertEqual(messages, [.pong(Probe(id: 4, sentMicros: 77))])
    }
}
