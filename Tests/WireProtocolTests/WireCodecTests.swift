import MonotonicTime
import SeededRandom
import XCTest
@testable import WireProtocol

final class WireCodecTests: XCTestCase {
    func encode(_ messages: [WireMessage], capacity: Int = 1200) throws -> [UInt8] { try Self.encode(messages, capacity: capacity) }

    /// One payload of `messages`, written by the codec one by one.
    static func encode(_ messages: [WireMessage], capacity: Int = 1200) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: capacity)
        let count = try buffer.withUnsafeMutableBytes { raw throws -> Int in
            var w = WireWriter(raw)
            try WireCodec.beginPayload(&w)
            for m in messages { try WireCodec.encode(m, into: &w) }
            return w.count
        }
        return Array(buffer[0..<count])
    }

    func decode(_ bytes: [UInt8]) -> ([WireMessage], WireCodec.Counters) {
        var counters = WireCodec.Counters()
        var out: [WireMessage] = []
        bytes.withUnsafeBytes { WireCodec.decode($0, counters: &counters) { out.append($0) } }
        return (out, counters)
    }

    static let slot = PadSlot(2)
    static var everyMessage: [WireMessage] {
        var motion = MotionBatch(slot: slot)
        _ = motion.append(WireMotionSample(timestampMicros: 1000, gyroX: 90, gyroY: -0.5, gyroZ: 0, accelX: 0, accelY: 1, accelZ: 0))
        _ = motion.append(WireMotionSample(timestampMicros: 5000, gyroX: 1, gyroY: 2, gyroZ: 3, accelX: 0.1, accelY: 0.9, accelZ: -0.2))
        var hid = HIDOutputMessage(slot: slot, sequence: WireSequence(9))
        hid.fields = [.lightbar, .rightTrigger]
        hid.red = 255; hid.blue = 64
        hid.rightTrigger = TriggerBlock([0x21, 0xf8, 0x03, 0x00, 0x48, 0x92, 0x24, 0x00, 0x00, 0x00, 0x00])
        return [
            .arrival(PadArrival(slot: slot, type: .dualSense, vendorID: 0x054c, productID: 0x0ce6,
                                capabilities: [.rumble, .touchpad, .gyro, .adaptiveTriggers], name: "DualSense Wireless Controller")),
            .arrival(PadArrival(slot: slot, type: .dualSenseEdge, vendorID: 0x054c, productID: 0x0df2, capabilities: [.gyro], name: "Edge",
                                identity: PadIdentity(calibration: FeatureReportBytes([0x05] + (1...40).map { UInt8($0) })!,
                                                      firmware: FeatureReportBytes([0x20] + [UInt8](repeating: 0xab, count: 63))!))),
            .state(PadStateSnapshot(slot: slot, sequence: WireSequence(65535), buttons: 0b1011, dpad: 3,
                                    leftX: -32768, leftY: 32767, rightX: 1, rightY: -1, l2: 255, r2: 7)),
            .touch(TouchSnapshot(slot: slot, sequence: WireSequence(3), first: WireTouchContact(id: 5, active: true, x: 1919, y: 1079))),
            .motion(motion),
            .battery(BatteryReport(slot: slot, percent: 55, state: 1)),
            .ping(Probe(id: 7, sentMicros: 123_456_789_000)),
            .rumble(RumbleLease(slot: slot, sequence: WireSequence(4), low: 65535, high: 1, ttlMillis: 250)),
            .hidOutput(hid),
            .motionRate(MotionRateRequest(slot: slot, hertz: 250)),
            .pong(Probe(id: 7, sentMicros: 1)),
            .haptics(haptics),
            .speaker(SpeakerFrame(slot: slot, sequence: WireSequence(0x1234), packet: [0xfc, 0xff, 0xfe])!),
            .microphone(MicrophoneFrame(slot: slot, sequence: WireSequence(9), packet: [1])!),
            .microphoneRequest(MicrophoneRequest(slot: slot, sequence: WireSequence(0xFFFF), ttlMillis: 2000)),
            .trackpadPulse(TrackpadPulse(slot: slot, sequence: WireSequence(2), side: .both, onMicros: 400, offMicros: 600, count: 2000, gain: -6)),
            .removal(slot),
        ]
    }

    static var haptics: HapticsBlock {
        var block = HapticsBlock(slot: slot, sequence: WireSequence(0xFFFE))
        for i in 0..<2 * HapticsBlock.frames { block[i] = Int8(truncatingIfNeeded: i * 9 - 128) }
        return block
    }

    /// Pinned from the layout docs/wire.md gives: type 0x24, length 33, slot, sequence (big-endian),
    /// 30 samples as signed bytes, left first.
    func testHapticsBlockLayoutIsPinned() throws {
        let bytes = try encode([.haptics(Self.haptics)])
        XCTAssertEqual(Array(bytes[0..<7]), [wireVersion, 0x24, 0x00, 33, 2, 0xFF, 0xFE])
        XCTAssertEqual(bytes.count, 1 + 3 + 33)
        XCTAssertEqual(Array(bytes[7...]).map { Int8(bitPattern: $0) }, (0..<30).map { Int8(truncatingIfNeeded: $0 * 9 - 128) })
        // Short samples are malformed at every cut; a bad slot is refused.
        for cut in 5..<bytes.count - 1 {
            var short = Array(bytes.prefix(cut))
            short[2] = 0; short[3] = UInt8(cut - 4)
            XCTAssertEqual(decode(short).1.malformed, 1, "cut at \(cut)")
        }
        var badSlot = bytes
        badSlot[4] = WireLimits.maxSlots
        XCTAssertEqual(decode(badSlot).1.malformed, 1)
    }

    /// The copy of the block before rides after the samples (docs/wire.md): length 63, the copy's
    /// 30 samples last. A body of the block alone has no copy, and one with fewer than 30 bytes
    /// after the samples (a newer sender's field) keeps the block and ignores them.
    func testAHapticsBlocksCopyOfTheOneBeforeIsPinned() throws {
        var previous = HapticsBlock(slot: Self.slot, sequence: WireSequence(0xFFFD))
        for i in 0..<2 * HapticsBlock.frames { previous[i] = Int8(truncatingIfNeeded: 100 - i * 7) }
        var block = Self.haptics
        block.attachPrevious(previous)
        let bytes = try encode([.haptics(block)])
        XCTAssertEqual(Array(bytes[0..<7]), [wireVersion, 0x24, 0x00, 63, 2, 0xFF, 0xFE])
        XCTAssertEqual(bytes.count, 1 + 3 + 63)
        XCTAssertEqual(Array(bytes[37...]).map { Int8(bitPattern: $0) }, (0..<30).map { Int8(truncatingIfNeeded: 100 - $0 * 7) })
        let decoded = try XCTUnwrap(decode(bytes).0.first)
        XCTAssertEqual(decoded, .haptics(block))
        guard case .haptics(let got) = decoded else { return XCTFail("\(decoded)") }
        XCTAssertTrue(got.carriesPrevious)
        XCTAssertEqual(got.withPreviousSamples { Array($0).map { Int8(bitPattern: $0) } }, (0..<30).map { Int8(truncatingIfNeeded: 100 - $0 * 7) })
        XCTAssertNotEqual(decoded, .haptics(Self.haptics), "a copy is part of what the message says")
        // Plain: no copy.
        guard case .haptics(let plain)? = decode(try encode([.haptics(Self.haptics)])).0.first else { return XCTFail() }
        XCTAssertFalse(plain.carriesPrevious)
        XCTAssertNil(plain.withPreviousSamples { $0.count })
        // 29 bytes after the samples: ignored, the block kept.
        var partial = Array(bytes.prefix(bytes.count - 1))
        partial[3] = 62
        let (messages, counts) = decode(partial)
        XCTAssertEqual(counts.malformed, 0)
        guard case .haptics(let kept)? = messages.first else { return XCTFail("\(messages)") }
        XCTAssertEqual(kept, Self.haptics)
    }

    func testSpeakerFrameLayoutIsPinned() throws {
        let frame = try XCTUnwrap(SpeakerFrame(slot: PadSlot(2), sequence: WireSequence(0xFFFE), packet: [7, 8, 9]))
        let bytes = try encode([.speaker(frame)])
        // docs/wire.md: type 0x25, length, slot, sequence, packet length, packet.
        XCTAssertEqual(bytes, [wireVersion, 0x25, 0x00, 7, 2, 0xFF, 0xFE, 3, 7, 8, 9])
        XCTAssertEqual(decode(bytes).0, [.speaker(frame)])
        // An empty packet, one over 160 bytes, or one longer than its message: malformed.
        for (length, body) in [(0, [UInt8]()), (161, [UInt8](repeating: 1, count: 161)), (9, [1, 2, 3])] {
            let message: [UInt8] = [2, 0xFF, 0xFE, UInt8(truncatingIfNeeded: length)] + body
            let hostile = [wireVersion, 0x25, UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
            XCTAssertEqual(decode(hostile).1.malformed, 1, "packet length \(length)")
        }
        XCTAssertNil(SpeakerFrame(slot: PadSlot(0), sequence: WireSequence(0), packet: []))
        XCTAssertNil(SpeakerFrame(slot: PadSlot(0), sequence: WireSequence(0), packet: [UInt8](repeating: 0, count: 161)))
    }

    /// docs/wire.md: the microphone's frame is the speaker's layout as type 0x08; a request is
    /// type 0x26, slot, sequence, lease in ms (big-endian), a hostile lease cut to 2 s.
    func testMicrophoneMessagesLayoutIsPinned() throws {
        let frame = try XCTUnwrap(MicrophoneFrame(slot: PadSlot(1), sequence: WireSequence(0x0102), packet: [5, 6]))
        XCTAssertEqual(try encode([.microphone(frame)]), [wireVersion, 0x08, 0x00, 6, 1, 0x01, 0x02, 2, 5, 6])
        let request = MicrophoneRequest(slot: PadSlot(3), sequence: WireSequence(0x0A0B), ttlMillis: 500)
        let bytes = try encode([.microphoneRequest(request)])
        XCTAssertEqual(bytes, [wireVersion, 0x26, 0x00, 5, 3, 0x0A, 0x0B, 0x01, 0xF4])
        XCTAssertEqual(decode(bytes).0, [.microphoneRequest(request)])
        let greedy: [UInt8] = [wireVersion, 0x26, 0x00, 5, 3, 0, 1, 0xFF, 0xFF]
        XCTAssertEqual(decode(greedy).0, [.microphoneRequest(MicrophoneRequest(slot: PadSlot(3), sequence: WireSequence(1), ttlMillis: MicrophoneRequest.maximumMillis))],
                       "a lease longer than 2 s is cut to 2 s")
        XCTAssertEqual(decode([wireVersion, 0x26, 0x00, 4, 3, 0, 1, 0x01]).1.malformed, 1, "a short request")
        XCTAssertEqual(decode([wireVersion, 0x26, 0x00, 5, WireLimits.maxSlots, 0, 1, 0x01, 0x00]).1.malformed, 1, "a bad slot")
    }

    func testEveryMessageRoundTrips() throws {
        let (decoded, counters) = decode(try encode(Self.everyMessage))
        XCTAssertEqual(decoded, Self.everyMessage)
        XCTAssertEqual(counters.messages, Self.everyMessage.count)
        XCTAssertEqual(counters.malformed + counters.unknownTypes + counters.unknownVersions, 0)
    }

    func testStateMessageLayoutIsPinned() throws {
        // docs/wire.md: type 0x03, length 18, slot, seq, buttons, dpad, 4 × i16 sticks, l2, r2 — big-endian.
        let bytes = try encode([.state(PadStateSnapshot(slot: PadSlot(1), sequence: WireSequence(0x0102), buttons: 0x0000_0002,
                                                         dpad: 8, leftX: -2, leftY: 0x0304, rightX: 0, rightY: 0, l2: 0xAA, r2: 0xBB))])
        XCTAssertEqual(bytes, [1, 0x03, 0, 18, 1, 0x01, 0x02, 0, 0, 0, 2, 8, 0xFF, 0xFE, 0x03, 0x04, 0, 0, 0, 0, 0xAA, 0xBB])
    }

    /// Full-resolution triggers ride after r2, only for pads that have them: the 8-bit layout
    /// above stays byte for byte, an older receiver stops at r2 (the message length skips the
    /// rest), and a pair that contradicts its 8-bit values is refused.
    func testFineTriggersAreTrailingOptionalAndChecked() throws {
        let fine = PadStateSnapshot(slot: PadSlot(1), sequence: WireSequence(0x0102), buttons: 0, dpad: 8,
                                    l2: 128, r2: 0, l2Fine: 0x8040, r2Fine: 0x0040)
        let bytes = try encode([.state(fine)])
        XCTAssertEqual(Array(bytes[2...3]), [0, 22], "18 bytes, then two u16")
        XCTAssertEqual(Array(bytes.suffix(4)), [0x80, 0x40, 0x00, 0x40])
        XCTAssertEqual(decode(bytes).0, [.state(fine)])
        // What a receiver before the fine fields reads: the message up to r2.
        let older = Self.withoutTrailing(bytes, 4)
        var coarse = fine
        coarse.l2Fine = nil; coarse.r2Fine = nil
        XCTAssertEqual(decode(older).0, [.state(coarse)])
        XCTAssertEqual(coarse.l2Wide, 128 * 257, "without fine values the 8-bit one is spread over 16 bits")
        XCTAssertFalse(fine.sameControls(as: coarse), "a change of 10-bit trigger alone is a change")
        // 0x8040 claims about 128 × 257; with l2 = 10 it is a lie.
        var lying = bytes
        lying[20] = 10
        let (decoded, counters) = decode(lying)
        XCTAssertTrue(decoded.isEmpty)
        XCTAssertEqual(counters.malformed, 1)
    }

    /// One message as a sender before its last `count` trailing bytes wrote it (its length less them).
    static func withoutTrailing(_ bytes: [UInt8], _ count: Int) -> [UInt8] {
        var older = Array(bytes.dropLast(count))
        older[3] -= UInt8(count)
        return older
    }

    /// A trackpad's pressure rides after the two contacts, only for pads that sense it (Valve's):
    /// a DualSense's touch message stays byte for byte, a receiver before it stops at the
    /// contacts, and pressure on a lifted finger is refused.
    func testTouchPressureIsTrailingOptionalAndChecked() throws {
        let pressed = TouchSnapshot(slot: PadSlot(1), sequence: WireSequence(7),
                                    first: WireTouchContact(id: 0, active: false, pressure: 0),
                                    second: WireTouchContact(id: 1, active: true, x: 1900, y: 10, pressure: 0xBEEF))
        let bytes = try encode([.touch(pressed)])
        XCTAssertEqual(Array(bytes[2...3]), [0, 19], "slot, sequence, two contacts of 6, then two u16")
        XCTAssertEqual(Array(bytes.suffix(4)), [0x00, 0x00, 0xBE, 0xEF])
        XCTAssertEqual(decode(bytes).0, [.touch(pressed)])
        let older = Self.withoutTrailing(bytes, 4)
        var unpressed = pressed
        unpressed.first.pressure = nil; unpressed.second.pressure = nil
        XCTAssertEqual(decode(older).0, [.touch(unpressed)])
        XCTAssertEqual(try encode([.touch(unpressed)]), older, "without pressure, the message a DualSense's touch always was")
        var lifted = bytes
        lifted[lifted.count - 3] = 1   // the lifted first contact pressing 1
        let (decoded, counters) = decode(lifted)
        XCTAssertTrue(decoded.isEmpty)
        XCTAssertEqual(counters.malformed, 1)
    }

    func testUnknownTypesAreSkippedAndTrailingFieldsIgnored() throws {
        var bytes = try encode([.removal(PadSlot(1))])
        bytes += [0x7E, 0, 3, 9, 9, 9]                       // a message type from the future
        bytes += [0x02, 0, 2, 4, 0xEE]                       // removal with a field added later
        let (decoded, counters) = decode(bytes)
        XCTAssertEqual(decoded, [.removal(PadSlot(1)), .removal(PadSlot(4))])
        XCTAssertEqual(counters.unknownTypes, 1)
    }

    func testUnknownVersionIsSkippedWhole() throws {
        var bytes = try encode([.removal(PadSlot(1))])
        bytes[0] = 2
        let (decoded, counters) = decode(bytes)
        XCTAssertTrue(decoded.isEmpty)
        XCTAssertEqual(counters.unknownVersions, 1)
    }

    func testMalformedMessagesAreDroppedAndCounted() throws {
        let good = try encode([.state(PadStateSnapshot(slot: PadSlot(0)))])
        // Every truncation of a valid payload decodes without crashing and never yields a wrong message.
        for cut in 2..<good.count {  // the version byte alone is an empty, valid payload
            let (decoded, counters) = decode(Array(good.prefix(cut)))
            XCTAssertTrue(decoded.isEmpty, "cut at \(cut)")
            XCTAssertEqual(counters.malformed, 1, "cut at \(cut)")
        }
        var badDpad = good
        badDpad[11] = 9
        XCTAssertEqual(decode(badDpad).1.malformed, 1)
    }

    func testDebugAndEmptyTriggerBlocksAreRefused() throws {
        for block in [[0xFC] + [UInt8](repeating: 1, count: 10), [UInt8](repeating: 0, count: 11)] {
            var hid = HIDOutputMessage(slot: PadSlot(0), sequence: WireSequence(1))
            hid.fields = [.leftTrigger]
            hid.leftTrigger = TriggerBlock(block)
            let (decoded, counters) = decode(try encode([.hidOutput(hid)]))
            XCTAssertTrue(decoded.isEmpty)
            XCTAssertEqual(counters.malformed, 1)
        }
    }

    func testLongNamesAreCutAtACharacterBoundary() throws {
        let name = String(repeating: "é", count: 40)  // 80 bytes of UTF-8
        let arrival = PadArrival(slot: PadSlot(0), type: .generic, vendorID: 1, productID: 2, capabilities: [], name: name)
        guard case .arrival(let decoded)? = decode(try encode([.arrival(arrival)])).0.first else { return XCTFail("no arrival") }
        XCTAssertEqual(decoded.name, String(repeating: "é", count: 32))
    }

    /// An arrival from a sender before the identity fields ends after the name: it decodes, with
    /// an empty identity; an identity report longer than 64 bytes is refused.
    func testArrivalIdentityIsOptionalAndBounded() throws {
        let plain = PadArrival(slot: PadSlot(1), type: .dualSense, vendorID: 0x054c, productID: 0x0ce6, capabilities: [], name: "pad")
        var bytes = try encode([.arrival(plain)])
        XCTAssertEqual(Array(bytes.suffix(2)), [0, 0], "an empty identity is two zero lengths")
        // Cut the two lengths off, as an older sender writes it, and fix the message length.
        bytes.removeLast(2)
        bytes[3] -= 2  // the message length's low byte (payload version u8, then type u8, length u16 big-endian)
        guard case .arrival(let old)? = decode(bytes).0.first else { return XCTFail("an arrival without identity fields did not decode") }
        XCTAssertEqual(old, plain)

        var oversize = try encode([.arrival(plain)])
        oversize[oversize.count - 2] = 65
        oversize += [UInt8](repeating: 0, count: 65)
        oversize[3] += 65
        let (decoded, counters) = decode(oversize)
        XCTAssertTrue(decoded.isEmpty)
        XCTAssertEqual(counters.malformed, 1)
        XCTAssertNil(FeatureReportBytes([UInt8](repeating: 0, count: 65)))
    }

    func testFullBufferIsAnErrorNotAnOverflow() {
        XCTAssertThrowsError(try encode(Self.everyMessage, capacity: 40)) { XCTAssertEqual($0 as? WireError, .noRoom) }
    }
}

final class SnapshotSyncTests: XCTestCase {
    /// The client's clock (the sender's) and the host's (the receiver's).
    let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
    let h0 = MonotonicInstant(nanoseconds: 91_000_000_000)

    func testSequencesCompareAcrossTheWrap() {
        XCTAssertTrue(WireSequence(0).isNewer(than: WireSequence(65535)))
        XCTAssertTrue(WireSequence(10).isNewer(than: WireSequence(65530)))
        XCTAssertFalse(WireSequence(65530).isNewer(than: WireSequence(10)))
        XCTAssertFalse(WireSequence(5).isNewer(than: WireSequence(5)))
    }

    func testSenderSendsChangesOnceAndResendsOnSchedule() {
        var sender = SnapshotSender(slot: PadSlot(0), schedule: .every(.milliseconds(100)))
        var pressed = PadStateSnapshot.neutral(PadSlot(0))
        pressed.buttons = 2
        XCTAssertNotNil(sender.update(.neutral(PadSlot(0)), now: t0), "the first state always goes out")
        XCTAssertNil(sender.update(.neutral(PadSlot(0)), now: t0 + .milliseconds(1)), "no change, nothing to send")
        let sent = sender.update(pressed, now: t0 + .milliseconds(2))
        XCTAssertEqual(sent?.buttons, 2)
        XCTAssertEqual(sent?.sequence, WireSequence(2))
        XCTAssertNil(sender.resendIfDue(now: t0 + .milliseconds(50)))
        XCTAssertEqual(sender.resendIfDue(now: t0 + .milliseconds(102)), sent)
        XCTAssertEqual(sender.nextResend, t0 + .milliseconds(202))
    }

    func testResendsComeQuicklyAfterAChangeThenSlowToTheKeepAlive() {
        let schedule = SnapshotSender.Schedule(afterChange: [.milliseconds(20), .milliseconds(40)], keepAlive: .milliseconds(200))
        var sender = SnapshotSender(slot: PadSlot(0), schedule: schedule)
        var pressed = PadStateSnapshot.neutral(PadSlot(0))
        pressed.buttons = 1
        _ = sender.update(pressed, now: t0)
        var sentAt: [Int] = []
        for ms in 1...1000 where sender.resendIfDue(now: t0 + .milliseconds(ms)) != nil { sentAt.append(ms) }
        XCTAssertEqual(sentAt, [20, 60, 260, 460, 660, 860])
        pressed.buttons = 2
        _ = sender.update(pressed, now: t0 + .milliseconds(1000))
        XCTAssertEqual(sender.nextResend, t0 + .milliseconds(1020), "a change restarts the fast re-sends")
        XCTAssertEqual(schedule.sends(within: .milliseconds(59)), 2)
        XCTAssertEqual(schedule.sends(within: .milliseconds(60)), 3)
        XCTAssertEqual(SnapshotSender.Schedule.standard.sends(within: .milliseconds(300)), 5)
    }

    func testReceiverKeepsTheNewestAndDropsReordered() {
        var receiver = SnapshotReceiver(lease: .milliseconds(500))
        var a = PadStateSnapshot.neutral(PadSlot(0)); a.sequence = WireSequence(65535); a.buttons = 1
        var b = a; b.sequence = WireSequence(0); b.buttons = 2
        XCTAssertTrue(receiver.accept(a, now: h0))
        XCTAssertTrue(receiver.accept(b, now: h0 + .milliseconds(10)))
        XCTAssertFalse(receiver.accept(a, now: h0 + .milliseconds(20)), "an older snapshot arriving late")
        XCTAssertEqual(receiver.current?.buttons, 2)
        XCTAssertEqual(receiver.staleDropped, 1)
        XCTAssertFalse(receiver.accept(b, now: h0 + .milliseconds(400)), "a re-send changes nothing but renews the lease")
        XCTAssertFalse(receiver.leaseExpired(now: h0 + .milliseconds(800)))
        XCTAssertTrue(receiver.leaseExpired(now: h0 + .milliseconds(901)))
    }

    /// Under 20% loss, a seeded simulation: after every change the host converges within the
    /// bound docs/wire.md states for p = 0.2 (seven sends: 700 ms with probability 1 - 0.2^7).
    func testConvergenceUnderLossStaysWithinTheBound() {
        var rng = SplitMix64(seed: 42)
        var sender = SnapshotSender(slot: PadSlot(0))
        var receiver = SnapshotReceiver()
        var worst: Duration = .zero
        var changedAt = t0
        var now = t0
        var target = PadStateSnapshot.neutral(PadSlot(0))
        var converged = true
        for step in 0..<20_000 {  // 1 ms steps, a change every 700 ms
            now = t0 + .milliseconds(step)
            if step % 700 == 0 {
                target.buttons = UInt32(step / 700)
                changedAt = now
                converged = false
            }
            var outgoing: [PadStateSnapshot] = []
            if let s = sender.update(target, now: now) { outgoing.append(s) }
            if let s = sender.resendIfDue(now: now) { outgoing.append(s) }
            for s in outgoing where rng.next() % 100 >= 20 { _ = receiver.accept(s, now: h0 + (now - t0)) }
            if !converged, receiver.current?.sameControls(as: target) == true {
                converged = true
                worst = max(worst, now - changedAt)
            }
        }
        XCTAssertLessThanOrEqual(worst, .milliseconds(700), "worst convergence \(worst)")
    }
}

