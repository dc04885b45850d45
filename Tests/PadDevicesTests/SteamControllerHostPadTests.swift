import HIDCodecs
import WireProtocol
import XCTest
@testable import PadFamilies

/// What the host's Steam Controller makes of the reports a game sends it, and the host's choice of
/// style, without a device.
final class SteamControllerHostPadTests: XCTestCase {
    func feedback(_ report: [UInt8], levels: inout MotorLevels, sequence: inout WireSequence) -> SteamControllerVirtualPad.Feedback? {
        SteamControllerVirtualPad.feedback(for: report, slot: PadSlot(2), lastLevels: &levels, sequence: &sequence)
    }

    /// Report 0x80 (SDL's layout: speeds at 4 and 7, controller_structs.h) is a lease of the
    /// strong (low-frequency) and weak levels once; a re-send of the same levels only says it
    /// still sounds; 0/0 is a lease of silence with no time to live.
    func testRumbleIsALeaseOncePerChangeAndItsResendsKeepItSounding() throws {
        var levels = MotorLevels.silent, sequence = WireSequence(0)
        let report: [UInt8] = [0x80, 0, 0, 0, 0x00, 0xc0, 2, 0x00, 0x40, 0]
        guard case .rumble(let message?, let sounds) = feedback(report, levels: &levels, sequence: &sequence),
              case .rumble(let lease) = message else { return XCTFail("no rumble lease") }
        XCTAssertTrue(sounds)
        XCTAssertEqual(lease.levels, MotorLevels(low: 0xc0, high: 0x40))
        XCTAssertEqual(lease.slot, PadSlot(2))
        XCTAssertGreaterThan(lease.ttlMillis, 0)
        XCTAssertLessThanOrEqual(Int(lease.ttlMillis), Int(SteamControllerVirtualPad.rumbleHold / .milliseconds(1)),
                                 "a lease never outlasts the host pad's own rumble end, should its stop be lost")
        guard case .rumble(nil, true) = feedback(report, levels: &levels, sequence: &sequence) else { return XCTFail("a re-send is no new lease") }
        guard case .rumble(let stop?, false) = feedback([0x80, 0, 0, 0, 0, 0, 2, 0, 0, 0], levels: &levels, sequence: &sequence),
              case .rumble(let silent) = stop else { return XCTFail("no stop") }
        XCTAssertTrue(silent.levels.isSilent)
        XCTAssertEqual(silent.ttlMillis, 0)
    }

    /// Report 0x81 is a pulse train with its fields, numbered; too short, an unknown pad, the
    /// settings feature and garbage are nothing the client plays.
    func testAPulseTrainCrossesWithItsFieldsAndAnythingElseStays() {
        var levels = MotorLevels.silent, sequence = WireSequence(0)
        let pulse = SteamControllerCommands.pulse(pad: .left, onMicros: 300, offMicros: 700, count: 5)
        guard case .pulse(let p) = feedback(pulse, levels: &levels, sequence: &sequence) else { return XCTFail("no pulse") }
        XCTAssertEqual([p.onMicros, p.offMicros, p.count], [300, 700, 5])
        XCTAssertEqual(p.side, .left)
        XCTAssertEqual(p.sequence, WireSequence(1))
        // A count beyond what the wire carries is cut to its longest train.
        guard case .pulse(let long) = feedback(SteamControllerCommands.pulse(pad: .right, onMicros: 65535, offMicros: 65535, count: 65535),
                                                levels: &levels, sequence: &sequence) else { return XCTFail("no pulse") }
        XCTAssertEqual(long.count, TrackpadPulse.largestCount(onMicros: 65535, offMicros: 65535))
        for report in [Array(pulse.prefix(5)), [0x81, 9, 1, 0, 1, 0, 1, 0], SteamControllerCommands.lizardModeOff, [], [0x80, 1], [0xff]] {
            XCTAssertNil(feedback(report, levels: &levels, sequence: &sequence), "\(report)")
        }
        XCTAssertTrue(levels.isSilent)
    }

    /// A pass's burst of pulse trains crosses as the newest per trackpad (both Valve host pads keep
    /// this): the pad plays one train at a time, and the older ones would only play late.
    func testABurstOfPulseTrainsCrossesAsTheNewestPerTrackpad() {
        func pulse(_ side: Trackpad, _ sequence: UInt16, count: UInt16) -> TrackpadPulse {
            TrackpadPulse(slot: PadSlot(1), sequence: WireSequence(sequence), side: side, onMicros: 300, offMicros: 700, count: count, gain: 0)
        }
        var newest = NewestPulses()
        for p in [pulse(.left, 1, count: 1), pulse(.right, 2, count: 2), pulse(.left, 3, count: 3), pulse(.both, 4, count: 4), pulse(.left, 5, count: 5)] {
            newest.take(p)
        }
        var messages: [WireMessage] = []
        newest.append(to: &messages)
        let crossed = messages.compactMap { message -> TrackpadPulse? in
            guard case .trackpadPulse(let p) = message else { return nil }
            return p
        }
        // The both-pads train (4) superseded the left's 3 and the right's 2; the left's 5 came after it.
        XCTAssertEqual(messages.count, 2)
        XCTAssertEqual(crossed.map(\.side), [.both, .left])
        XCTAssertEqual(crossed.map(\.count), [4, 5], "each pad ends on its newest train")
        var oneSideLast = NewestPulses()
        for p in [pulse(.both, 1, count: 1), pulse(.right, 2, count: 2)] { oneSideLast.take(p) }
        var after: [WireMessage] = []
        oneSideLast.append(to: &after)
        XCTAssertEqual(after.compactMap { m -> UInt16? in if case .trackpadPulse(let p) = m { p.count } else { nil } }, [1, 2],
                       "a one-pad train after a both-pads one plays after it")
        var none: [WireMessage] = []
        NewestPulses().append(to: &none)
        XCTAssertTrue(none.isEmpty)
    }

    func testTheHostsStyleChoicesAreEachDriversOwn() throws {
        XCTAssertEqual(HostStyleChoices.offered, ["steam-controller=deck", "steam-controller=itself"])
        var choices = HostStyleChoices()
        try choices.add("steam-controller=itself")
        XCTAssertEqual(choices.style(for: .steamController)?.name, "itself")
        XCTAssertNil(choices.style(for: .steamDeck))
        for bad in ["steam-controller", "steam-controller=", "=itself", "steamdeck=itself", "steam-controller=itself=x", ""] {
            XCTAssertThrowsError(try choices.add(bad), bad)
        }
        XCTAssertEqual(choices.style(for: .steamController)?.name, "itself", "a refused choice changes nothing")
    }
}
