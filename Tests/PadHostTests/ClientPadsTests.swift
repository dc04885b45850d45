import LogCapture
import Feedback
import HIDCodecs
import MonotonicTime
@testable import PadFamilies
import PadSystem
import WireProtocol
import XCTest
@testable import PadHost

final class ClientPadsTests: XCTestCase {
    let t0 = MonotonicInstant.now
    var made: [RecordedPad] = []

    func session(maxPads: Int = 4) -> ClientPads {
        ClientPads(maxPads: maxPads, stateLease: .milliseconds(500)) { [unowned self] arrival in
            let pad = RecordedPad(arrival: arrival)
            made.append(pad)
            return pad
        }
    }

    func arrival(_ slot: UInt8) -> WireMessage {
        .arrival(PadArrival(slot: PadSlot(slot), type: .dualSense, vendorID: 0x054c, productID: 0x0ce6, capabilities: [.rumble], name: "pad"))
    }

    func state(_ slot: UInt8, _ seq: UInt16, buttons: UInt32) -> WireMessage {
        .state(PadStateSnapshot(slot: PadSlot(slot), sequence: WireSequence(seq), buttons: buttons, leftX: 1000))
    }

    func testStatesApplyInOrderAndStaleOnesAreDropped() {
        let host = session()
        _ = host.handle(arrival(0), now: t0)
        _ = host.handle(state(0, 2, buttons: 1), now: t0)
        _ = host.handle(state(0, 1, buttons: 4), now: t0)  // late
        _ = host.handle(state(0, 3, buttons: 2), now: t0)
        XCTAssertEqual(made[0].state.buttons, 2)
        XCTAssertEqual(made[0].history.map(\.buttons), [1, 2])
        XCTAssertEqual(host.counters.staleSnapshots, 1)
    }

    func testASilentClientLeavesNoButtonHeldAndItsPadGoesOnlyAfterTheGrace() {
        let host = session()
        _ = host.handle(arrival(0), now: t0)
        _ = host.handle(state(0, 1, buttons: 0b10), now: t0)
        host.expireLeases(now: t0 + .milliseconds(400))
        XCTAssertEqual(made[0].state.buttons, 0b10, "still within the lease")
        XCTAssertEqual(host.nextLeaseDeadline(), t0 + .milliseconds(500))
        host.expireLeases(now: t0 + .milliseconds(501))
        XCTAssertEqual(made[0].state.buttons, 0, "released when the lease lapsed")
        XCTAssertEqual(made[0].state.leftX, 0, "centred when the lease lapsed")
        XCTAssertFalse(made[0].removed, "a stall is not an unplug")
        XCTAssertEqual(host.counters.leaseExpiries, 1)
        XCTAssertEqual(host.nextLeaseDeadline(), t0 + .milliseconds(500) + ClientPads.minimumPadGrace)
        host.expireLeases(now: t0 + .milliseconds(501) + ClientPads.minimumPadGrace)
        XCTAssertTrue(made[0].removed, "unplugged once the grace period is over too")
        XCTAssertEqual(host.counters.graceRemovals, 1)
        XCTAssertTrue(host.pads.isEmpty)
    }

    func testAClientBackFromAStallGetsItsStateBackOnTheSamePad() {
        let host = session()
        _ = host.handle(arrival(0), now: t0)
        _ = host.handle(state(0, 7, buttons: 0b100), now: t0)
        host.expireLeases(now: t0 + .seconds(2))
        XCTAssertEqual(made[0].state.buttons, 0)
        // The client's next keep-alive repeats the same snapshot (same sequence): it applies again.
        _ = host.handle(state(0, 7, buttons: 0b100), now: t0 + .seconds(3))
        XCTAssertEqual(made[0].state.buttons, 0b100)
        XCTAssertEqual(made.count, 1, "the same virtual pad throughout")
        XCTAssertFalse(made[0].removed)
        host.expireLeases(now: t0 + .seconds(3) + .milliseconds(400))
        XCTAssertEqual(made[0].state.buttons, 0b100, "a fresh lease")
    }

    func testPadsMadeInTheBackgroundGetWhatArrivedMeanwhile() {
        final class DeferredMaker: PadMaker {
            var requests: [(PadArrival, (Result<VirtualPad, Error>) -> Void)] = []
            var removed: [VirtualPad] = []
            func make(_ arrival: PadArrival, done: @escaping (Result<VirtualPad, Error>) -> Void) { requests.append((arrival, done)) }
            func remove(_ pad: VirtualPad) { removed.append(pad); pad.remove() }
        }
        let maker = DeferredMaker()
        let host = ClientPads(maxPads: 4, stateLease: .milliseconds(500), maker: maker)
        _ = host.handle(arrival(0), now: t0)
        _ = host.handle(arrival(0), now: t0)
        _ = host.handle(arrival(1), now: t0)
        XCTAssertEqual(maker.requests.count, 1, "one pad is made at a time; repeats and others wait")
        _ = host.handle(state(0, 1, buttons: 0b1000), now: t0)
        let pad = InProcessPad(arrival: maker.requests[0].0)
        maker.requests[0].1(.success(pad))
        XCTAssertEqual(pad.state.buttons, 0b1000, "the state that came while the pad was made shows at once")
        _ = host.handle(arrival(1), now: t0)
        XCTAssertEqual(maker.requests.count, 2, "the next slot's announcement is taken once the first is done")
        host.close()
        let late = InProcessPad(arrival: maker.requests[1].0)
        maker.requests[1].1(.success(late))
        XCTAssertTrue(late.removed, "a pad made after its client left is unplugged again")
    }

    func testARepeatedArrivalKeepsThePadAndAFailedOneIsRetriedAfterAPause() {
        var failures = 1
        let host = ClientPads(maxPads: 4, stateLease: .milliseconds(500)) { [unowned self] arrival in
            if failures > 0 { failures -= 1; throw HostTestError.deviceBusy }
            let pad = RecordedPad(arrival: arrival)
            made.append(pad)
            return pad
        }
        let logged = CapturedLog()
        host.logger = logged.logger
        _ = host.handle(arrival(0), now: t0)
        XCTAssertEqual(host.counters.deviceErrors, 1)
        XCTAssertEqual(logged.count, 1, "a failed virtual pad is reported, not just counted")
        _ = host.handle(arrival(0), now: t0 + .milliseconds(200))
        XCTAssertTrue(made.isEmpty, "not retried on every keep-alive")
        _ = host.handle(arrival(0), now: t0 + .seconds(3))
        XCTAssertEqual(made.count, 1, "retried after the pause")
        _ = host.handle(state(0, 1, buttons: 4), now: t0 + .seconds(3))
        _ = host.handle(arrival(0), now: t0 + .milliseconds(3200))
        XCTAssertEqual(made.count, 1, "the same announcement again keeps the pad")
        XCTAssertFalse(made[0].removed)
        XCTAssertEqual(made[0].state.buttons, 4)
    }

    /// A client that re-announces its pad under ever-changing names (issue 39: 64,308 log lines in
    /// 20 s, and each announcement a kernel device made and removed): the host makes at most its
    /// allowance of pads, and says so in a few lines per reason.
    func testAnnouncementChurnIsBoundedInPadsMadeAndInLines() {
        let host = session()
        let logged = CapturedLog()
        host.logger = logged.logger
        var at = t0
        for i in 0..<20_000 {  // 20 s of one every millisecond
            at = t0 + .milliseconds(i)
            let arrival = PadArrival(slot: PadSlot(0), type: .dualSense, vendorID: 0x054c, productID: 0x0ce6, capabilities: [.rumble], name: "pad \(i % 2)")
            _ = host.handle(.arrival(arrival), now: at)
        }
        let allowed = ClientPads.arrivalBurst + Int((at - t0) / ClientPads.arrivalInterval)
        XCTAssertLessThanOrEqual(made.count, allowed, "pads made under churn")
        XCTAssertGreaterThanOrEqual(made.count, ClientPads.arrivalBurst, "the allowance itself is honoured")
        XCTAssertEqual(made.filter { !$0.removed }.count, 1, "every replaced pad was removed")
        XCTAssertGreaterThan(host.counters.heldArrivals, 9_000, "half the announcements name the pad there now, and change nothing")
        // The test ran in well under one window of real time: 3 lines per reason, and the counts of the rest.
        let reasons = ["pad replaced", "arrivals too fast"]
        XCTAssertLessThanOrEqual(logged.count, reasons.count * (RateLimitedLogHandler.linesPerWindow + 1), "\(logged.messages.prefix(20))")
    }

    func testDisconnectReleasesEveryPad() {
        let host = session()
        for slot in 0..<3 { _ = host.handle(arrival(UInt8(slot)), now: t0); _ = host.handle(state(UInt8(slot), 1, buttons: 8), now: t0) }
        host.close()
        XCTAssertEqual(made.count, 3)
        XCTAssertTrue(made.allSatisfy { $0.removed && $0.state.buttons == 0 })
    }

    func testMaxPadsAndUnknownSlots() {
        let host = session(maxPads: 1)
        _ = host.handle(arrival(0), now: t0)
        _ = host.handle(arrival(1), now: t0)
        XCTAssertEqual(host.pads.count, 1)
        XCTAssertEqual(host.counters.refusedArrivals, 1)
        _ = host.handle(state(5, 1, buttons: 1), now: t0)
        XCTAssertEqual(host.counters.unknownSlot, 1)
    }

    func testAReannouncedPadStartsItsSequenceAfresh() {
        let host = session()
        _ = host.handle(arrival(0), now: t0)
        _ = host.handle(state(0, 40000, buttons: 1), now: t0)
        XCTAssertEqual(made[0].state.buttons, 1, "a pad's first state is taken whatever its sequence")
        // Another pad announced in the slot (the removal of the old one was lost).
        _ = host.handle(.arrival(PadArrival(slot: PadSlot(0), type: .xbox, vendorID: 0x045e, productID: 0x028e, capabilities: [.rumble], name: "other")), now: t0)
        _ = host.handle(state(0, 1, buttons: 2), now: t0)
        XCTAssertTrue(made[0].removed)
        XCTAssertEqual(made[1].state.buttons, 2)
    }

    func testPingIsAnsweredAndFeedbackIsCollected() {
        let host = session()
        // The pong echoes id, time and size, and carries the host's tally of this session's pings.
        XCTAssertEqual(host.handle(.ping(Probe(id: 3, sentMicros: 9, padding: 20)), now: t0),
                       [.pong(Probe(id: 3, sentMicros: 9, tally: PingTally(received: 1, highestID: 3), padding: 20))])
        XCTAssertEqual(host.handle(.ping(Probe(id: 2, sentMicros: 8, figures: LinkFigures(roundTripMicros: 1500))), now: t0),
                       [.pong(Probe(id: 2, sentMicros: 8, tally: PingTally(received: 2, highestID: 3, reordered: 1)))])
        XCTAssertEqual(host.clientFigures?.roundTripMicros, 1500, "the client's figures are kept for host status")
        _ = host.handle(arrival(0), now: t0)
        let lease = WireMessage.rumble(RumbleLease(slot: PadSlot(0), sequence: WireSequence(1), low: 100, high: 0, ttlMillis: 200))
        made[0].pendingFeedback = [lease]
        XCTAssertEqual(host.feedback(now: t0), [lease])
        XCTAssertEqual(host.feedback(now: t0 + .milliseconds(10)), [], "nothing new, renewal not due")
        XCTAssertEqual(host.nextRenewal(), t0 + .milliseconds(80))
        guard case .rumble(let renewal)? = host.feedback(now: t0 + .milliseconds(80)).first else { return XCTFail("no renewal") }
        XCTAssertEqual(renewal.low, 100)
        XCTAssertTrue(renewal.sequence.isNewer(than: WireSequence(1)), "a renewal is a newer message")
        made[0].pendingFeedback = [.rumble(RumbleLease(slot: PadSlot(0), sequence: WireSequence(9), low: 0, high: 0, ttlMillis: 0))]
        XCTAssertEqual(host.feedback(now: t0 + .milliseconds(90)).count, 1, "the stop goes out")
        XCTAssertNil(host.nextRenewal(), "a stop is not renewed")
    }

    /// Lights and triggers have no lease: a lost datagram once left a forwarded DualSense without
    /// the right trigger's effect that SDL set (issue 38). The host sends the game's whole output
    /// state again after each change, and a later change to other fields keeps the trigger in it.
    func testLightsAndTriggersGoAgainAfterEachChangeWithTheWholeStateSoFar() {
        let host = session()
        _ = host.handle(arrival(0), now: t0)
        var trigger = HIDOutputMessage(slot: PadSlot(0), sequence: WireSequence(1))
        trigger.fields = .rightTrigger
        trigger.rightTrigger = TriggerBlock([0x01, 0x05, 0xff, 0, 0, 0, 0, 0, 0, 0, 0])
        made[0].pendingFeedback = [.hidOutput(trigger)]
        XCTAssertEqual(host.feedback(now: t0), [.hidOutput(trigger)], "the change goes at once")
        // Say that datagram was lost: the state goes again on the resend schedule, and only then.
        XCTAssertEqual(host.nextRenewal(), t0 + HeldOutput.resends[0])
        XCTAssertEqual(host.feedback(now: t0 + HeldOutput.resends[0] - .milliseconds(1)), [])
        XCTAssertEqual(host.feedback(now: t0 + HeldOutput.resends[0]), [.hidOutput(trigger)])
        // Then the game sets only the player LEDs: every resend carries both.
        let later = t0 + .milliseconds(30)
        var leds = HIDOutputMessage(slot: PadSlot(0), sequence: WireSequence(2))
        leds.fields = .playerLEDs
        leds.playerLEDMask = 0b00100
        made[0].pendingFeedback = [.hidOutput(leds)]
        XCTAssertEqual(host.feedback(now: later), [.hidOutput(leds)])
        var whole = trigger
        whole.merge(leds)
        XCTAssertEqual(whole.fields, [.rightTrigger, .playerLEDs])
        var resent: [WireMessage] = []
        for offset in HeldOutput.resends { resent += host.feedback(now: later + offset) }
        XCTAssertEqual(resent, Array(repeating: .hidOutput(whole), count: HeldOutput.resends.count))
        XCTAssertEqual(host.feedback(now: later + .seconds(5)), [], "a few resends, not a stream")
        XCTAssertNil(host.nextRenewal())
    }
}

enum HostTestError: Error { case deviceBusy }

/// The virtual DualSense's way back from physical units to raw counts is total: whatever gets
/// past the decoder cannot trap the host.
final class VirtualPadConversionTests: XCTestCase {
    func testMotionConversionSaturatesAndNeverTraps() {
        let axis = AxisCalibration(bias: -3, numerator: 2000, denominator: 17_000)
        XCTAssertEqual(PlayStationVirtualPad.raw(.nan, axis, 1024), 0)
        XCTAssertEqual(PlayStationVirtualPad.raw(.infinity, axis, 1024), .max)
        XCTAssertEqual(PlayStationVirtualPad.raw(-.infinity, axis, 1024), .min)
        XCTAssertEqual(PlayStationVirtualPad.raw(1e30, axis, 1024), .max)
        XCTAssertEqual(PlayStationVirtualPad.raw(-1e30, axis, 1024), .min)
        XCTAssertEqual(PlayStationVirtualPad.raw(1, AxisCalibration(bias: 0, numerator: 0, denominator: 1), 1024), 0, "a zero numerator")
        XCTAssertEqual(PlayStationVirtualPad.raw(0, axis, 1024), -3, "the bias alone at rest")
    }
}

/// The uinput Xbox pad reports what xpad reports for an Xbox 360 pad, which SDL and games rely on.
final class XboxVirtualPadMappingTests: XCTestCase {
    func testFaceButtonsCarryXpadsCodes() {
        let codes = Dictionary(uniqueKeysWithValues: Xbox360VirtualPad.buttonKeys.map { ($0.0.rawValue, $0.1) })
        // input-event-codes.h: BTN_A 0x130, BTN_B 0x131, BTN_X 0x133, BTN_Y 0x134; xpad maps the
        // pad's A, B, X, Y to them by label: X sits west, Y north.
        XCTAssertEqual(codes[GamepadButtons.south.rawValue], 0x130, "A")
        XCTAssertEqual(codes[GamepadButtons.east.rawValue], 0x131, "B")
        XCTAssertEqual(codes[GamepadButtons.west.rawValue], 0x133, "X is west, and xpad reports it as BTN_X")
        XCTAssertEqual(codes[GamepadButtons.north.rawValue], 0x134, "Y is north, and xpad reports it as BTN_Y")
        XCTAssertEqual(codes[GamepadButtons.create.rawValue], 0x13a, "Back: BTN_SELECT")
        XCTAssertEqual(codes[GamepadButtons.options.rawValue], 0x13b, "Start: BTN_START")
        XCTAssertEqual(codes[GamepadButtons.ps.rawValue], 0x13c, "Guide: BTN_MODE")
    }
}

extension XboxVirtualPadMappingTests {
    /// An effect of 300 ms played once: the host holds the rumble, then stops it at 300 ms by itself.
    func testAUInputEffectStopsAfterItsLength() {
        var playback = MemlessPlayback(), sent = MotorLevels.silent
        playback.upload(id: 0, .init(levels: MotorLevels(low: 255, high: 128), length: .milliseconds(300)), now: .origin)
        playback.play(id: 0, count: 1, now: .origin)
        func leases(_ ms: Int) -> [WireMessage] {
            Xbox360VirtualPad.leases(for: &playback, sent: &sent, slot: PadSlot(0), now: .origin + .milliseconds(ms))
        }
        guard case .rumble(let on)? = leases(0).first else { return XCTFail("no rumble") }
        XCTAssertEqual(on.low, 255 * 257)
        XCTAssertEqual(on.ttlMillis, 300, "the lease reaches the effect's end, no further")
        XCTAssertEqual(leases(150), [], "nothing new while it plays: the host renews the held lease")
        guard case .rumble(let off)? = leases(300).first else { return XCTFail("no stop at 300 ms") }
        XCTAssertTrue(off.isStop)
    }
}

/// A game's uinput effect against the host's and the client's schedules, in simulated time
/// (issue 38: a 300 ms effect once kept the physical motors on about 3 s on a loaded guest). The
/// host pad is `Xbox360VirtualPad`'s own playback and lease rule; the client is the renderer the
/// physical pad runs. Whatever the host's loop does after the effect starts (late by seconds,
/// failing), the client's motors stop at the effect's length, within one rendering tick.
final class UInputEffectRaceTests: XCTestCase {
    /// The uinput pad's feedback on a clock the test moves.
    final class MemlessPad: VirtualPad {
        let arrival = PadArrival(slot: PadSlot(0), type: .xbox, vendorID: 0x045e, productID: 0x028e, capabilities: [.rumble], name: "pad")
        var clock = MonotonicInstant.origin
        var playback = MemlessPlayback()
        var sent = MotorLevels.silent
        var failing = false
        func apply(_ state: PadStateSnapshot) throws {}
        func apply(_ touch: TouchSnapshot) throws {}
        func apply(_ motion: MotionBatch) throws {}
        var feedbackDescriptors: [FileDescriptor] { [] }
        func takeFeedback(into messages: inout [WireMessage]) throws {
            if failing { throw HostTestError.deviceBusy }
            messages += Xbox360VirtualPad.leases(for: &playback, sent: &sent, slot: arrival.slot, now: clock)
        }
        var feedbackDeadline: MonotonicInstant? { playback.nextChange(after: clock) }
        var rumbleEnds: MonotonicInstant? { playback.nextChange(after: clock) }
        func remove() {}
    }

    let effect = MemlessPlayback.Effect(levels: MotorLevels(low: 255, high: 128), length: .milliseconds(300))
    var pad: MemlessPad!
    var host: ClientPads!
    var renderer = RumbleRenderer()
    /// When the client's motors last went from running to stopped.
    var stoppedAt: MonotonicInstant?

    override func setUp() {
        pad = MemlessPad()
        host = ClientPads(maxPads: 1, stateLease: .milliseconds(500)) { [unowned self] _ in pad }
        _ = host.handle(.arrival(pad.arrival), now: .origin)
        pad.playback.upload(id: 0, effect, now: .origin)
        pad.playback.play(id: 0, count: 1, now: .origin)
    }

    /// One host pass at `at`: what it sends reaches the client at once.
    func hostPass(at time: MonotonicInstant) {
        client(until: time)
        pad.clock = time
        for case .rumble(let lease) in host.feedback(now: time) {
            renderer.receive(RumbleMessage(sequence: UInt64(lease.sequence.rawValue), levels: lease.levels,
                                           timeToLive: .milliseconds(Int(lease.ttlMillis))), at: time)
        }
        client(until: time)
    }

    /// The client's loop up to `time`, waking at every deadline its renderer names.
    func client(until time: MonotonicInstant) {
        var now = renderer.nextDeadline.map { min($0, time) } ?? time
        while true {
            for action in renderer.step(now: now) where action == .stop { stoppedAt = now }
            guard let next = renderer.nextDeadline, next <= time, next > now else { break }
            now = next
        }
    }

    /// The renderer's own tick: a pass every throttle window at most.
    var tick: Duration { renderer.configuration.throttle }

    func testTheMotorsStopAtTheEffectsLengthWhenTheHostStallsAfterARenewal() {
        hostPass(at: .origin)
        XCTAssertFalse(renderer.applied.isSilent, "the effect plays")
        hostPass(at: .origin + .milliseconds(200))  // a renewal may go out here
        // The host's loop is held for seconds (a loaded machine); only the client runs.
        client(until: .origin + .seconds(3))
        let stopped = try? XCTUnwrap(stoppedAt)
        XCTAssertNotNil(stopped, "the motors ran on while the host stalled")
        if let stopped { XCTAssertLessThanOrEqual(stopped, .origin + .milliseconds(300) + tick, "stopped at \(stopped)") }
        hostPass(at: .origin + .seconds(3))
        XCTAssertTrue(renderer.applied.isSilent)
    }

    func testTheMotorsStopAtTheEffectsLengthWhenTheHostPadFailsAfterItsStart() {
        hostPass(at: .origin)
        var renewalsAfterTheEnd = 0
        for ms in stride(from: 50, through: 3000, by: 50) {
            if ms == 250 { pad.failing = true }  // every takeFeedback from here on throws
            hostPass(at: .origin + .milliseconds(ms))
            if ms > 300 && renderer.target != .silent { renewalsAfterTheEnd += 1 }
        }
        XCTAssertEqual(renewalsAfterTheEnd, 0, "a lease reached past the effect's end")
        let stopped = try? XCTUnwrap(stoppedAt)
        if let stopped { XCTAssertLessThanOrEqual(stopped, .origin + .milliseconds(300) + tick, "stopped at \(stopped)") }
        XCTAssertGreaterThan(host.counters.deviceErrors, 0, "the failure was exercised")
    }

    /// What SDL 2 leaves on the pad before the game's effect (SDLClientTests, where the 300 ms
    /// effect once ran 3 s): its rumble is one effect of 65.5 s re-uploaded at each change, its
    /// stop that effect at zero, still playing; then it closes (the kernel stops and erases it) or
    /// not yet, and the game's effect comes in the same slot or the next.
    func testAGamesEffectAfterSDLsRumbleAndStopEndsAtItsLength() {
        for (closed, gameSlot) in [(true, 0), (false, 1)] {
            setUp()
            stoppedAt = nil
            renderer = RumbleRenderer()
            let sdl = MemlessPlayback.Effect(levels: MotorLevels(low: 255, high: 128), length: .milliseconds(65_535))
            pad.playback.erase(id: 0)
            pad.playback.upload(id: 0, sdl, now: .origin)
            pad.playback.play(id: 0, count: 1, now: .origin)
            hostPass(at: .origin)
            var silent = sdl
            silent.levels = .silent
            pad.playback.upload(id: 0, silent, now: .origin + .milliseconds(500))
            pad.playback.play(id: 0, count: 1, now: .origin + .milliseconds(500))
            hostPass(at: .origin + .milliseconds(500))
            client(until: .origin + .seconds(1))
            XCTAssertTrue(renderer.applied.isSilent, "SDL's stop")
            if closed {
                pad.playback.play(id: 0, count: 0, now: .origin + .seconds(1))
                pad.playback.erase(id: 0)
            }
            stoppedAt = nil
            let start = MonotonicInstant.origin + .milliseconds(1500)
            pad.playback.upload(id: gameSlot, MemlessPlayback.Effect(levels: MotorLevels(low: 192, high: 0), length: .milliseconds(300)), now: start)
            pad.playback.play(id: gameSlot, count: 1, now: start)
            for ms in stride(from: 0, through: 3000, by: 20) { hostPass(at: start + .milliseconds(ms)) }
            let stopped = try? XCTUnwrap(stoppedAt, "SDL's effect \(closed ? "erased" : "still playing at zero"): the game's effect never stopped")
            if let stopped { XCTAssertLessThanOrEqual(stopped, start + .milliseconds(300) + tick, "stopped at \(stopped)") }
        }
    }

    func testAnEffectPlayedAgainBeforeItsEndRunsToItsNewEnd() {
        hostPass(at: .origin)
        hostPass(at: .origin + .milliseconds(200))
        // The game plays it again at 250 ms: the same levels, so no new lease; it now ends at 550.
        pad.playback.play(id: 0, count: 1, now: .origin + .milliseconds(250))
        hostPass(at: .origin + .milliseconds(250))
        hostPass(at: .origin + .milliseconds(400))
        client(until: .origin + .milliseconds(549))
        XCTAssertNil(stoppedAt, "stopped at \(stoppedAt.map { "\($0)" } ?? "")")
        XCTAssertFalse(renderer.applied.isSilent, "it plays to its new end")
        // The host stalls again: the motors still stop at 550.
        client(until: .origin + .seconds(3))
        let stopped = try? XCTUnwrap(stoppedAt)
        XCTAssertNotNil(stopped)
        if let stopped { XCTAssertLessThanOrEqual(stopped, .origin + .milliseconds(550) + tick, "stopped at \(stopped)") }
    }
}

extension ClientPads {
    /// One pass's feedback as its own array (the input path appends to a buffer it keeps).
    func feedback(now: MonotonicInstant) -> [WireMessage] {
        var out: [WireMessage] = []
        feedback(now: now, into: &out)
        return out
    }
}
