import HIDCodecs
import MonotonicTime
import PadFamilies
@testable import PadHost
import WireProtocol
import XCTest

final class PlayerSlotsTests: XCTestCase {
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    func owner(_ client: UInt8, _ pad: UInt8?, slot: UInt8 = 0) -> PlayerSlots.Owner {
        PlayerSlots.Owner(client: FeatureReportBytes([client, client])!, pad: pad.map { FeatureReportBytes([0xAA, $0])! } ?? FeatureReportBytes(),
                          slot: PadSlot(slot))
    }

    func testNumbersGoLowestFreeFirstAndHoldWhileTheirPadIsHere() {
        var slots = PlayerSlots(capacity: 4, grace: .seconds(30))
        XCTAssertEqual(slots.claim(owner(1, 1), holder: 1, now: t0), 1)
        XCTAssertEqual(slots.claim(owner(1, 2), holder: 1, now: t0), 2)
        XCTAssertEqual(slots.claim(owner(2, 1), holder: 1, now: t0), 3, "the same pad identity from another client is another pad")
        XCTAssertEqual(slots.claim(owner(1, 1), holder: 1, now: t0 + .seconds(100)), 1, "claimed again while here: the same number")
    }

    func testADroppedPadGetsItsNumberBackWithinGraceWhateverArrivedMeanwhile() {
        var slots = PlayerSlots(capacity: 4, grace: .seconds(30))
        _ = slots.claim(owner(1, 1), holder: 1, now: t0)
        _ = slots.claim(owner(1, 2), holder: 1, now: t0)
        slots.release(owner(1, 1), holder: 1, now: t0 + .seconds(1))
        XCTAssertEqual(slots.claim(owner(3, 7), holder: 1, now: t0 + .seconds(2)), 3, "a newcomer does not take a number that waits for its pad")
        XCTAssertEqual(slots.claim(owner(1, 1), holder: 1, now: t0 + .seconds(20)), 1, "back within grace")
        XCTAssertEqual(slots.waiting(now: t0 + .seconds(20)).count, 0)
    }

    func testGraceOverFreesTheNumber() {
        var slots = PlayerSlots(capacity: 4, grace: .seconds(30))
        _ = slots.claim(owner(1, 1), holder: 1, now: t0)
        slots.release(owner(1, 1), holder: 1, now: t0)
        XCTAssertEqual(slots.waiting(now: t0 + .seconds(29)).map(\.number), [1])
        XCTAssertEqual(slots.claim(owner(2, 2), holder: 1, now: t0 + .seconds(31)), 1, "past grace: the lowest number is free again")
        XCTAssertEqual(slots.claim(owner(1, 1), holder: 1, now: t0 + .seconds(32)), 2, "the old pad is a newcomer now")
    }

    func testAReleaseRestartsNoGraceAndOnlyItsOwnerIsReleased() {
        var slots = PlayerSlots(capacity: 4, grace: .seconds(30))
        _ = slots.claim(owner(1, 1), holder: 1, now: t0)
        slots.release(owner(1, 1), holder: 1, now: t0)
        slots.release(owner(1, 1), holder: 1, now: t0 + .seconds(20))   // a second removal does not extend the wait
        slots.release(owner(9, 9), holder: 1, now: t0)                   // nobody's: nothing happens
        XCTAssertEqual(slots.claim(owner(2, 2), holder: 1, now: t0 + .seconds(31)), 1)
    }

    func testWhenEveryNumberIsTakenTheLongestAbsentGivesWayAndPresentOnesNever() {
        var slots = PlayerSlots(capacity: 3, grace: .seconds(60))
        for pad in UInt8(1)...3 { _ = slots.claim(owner(1, pad), holder: 1, now: t0) }
        XCTAssertNil(slots.claim(owner(2, 1), holder: 1, now: t0), "three pads here hold every number")
        slots.release(owner(1, 3), holder: 1, now: t0 + .seconds(1))
        slots.release(owner(1, 2), holder: 1, now: t0 + .seconds(2))
        XCTAssertEqual(slots.claim(owner(2, 1), holder: 1, now: t0 + .seconds(3)), 3, "the longest-absent number goes to the pad that is here")
        XCTAssertNil(slots.number(of: owner(1, 3)))
        XCTAssertEqual(slots.claim(owner(1, 2), holder: 1, now: t0 + .seconds(4)), 2, "the other absent pad still gets its own back")
    }

    func testTheSamePadFromANewSessionTakesItsNumberAndTheOldSessionReleasesNothing() {
        var slots = PlayerSlots(capacity: 4, grace: .seconds(30))
        XCTAssertEqual(slots.claim(owner(1, 1), holder: 10, now: t0), 1)
        XCTAssertEqual(slots.holder(of: owner(1, 1)), 10)
        XCTAssertEqual(slots.claim(owner(1, 1), holder: 11, now: t0 + .seconds(3)), 1, "the client reconnected: its pad keeps its number")
        XCTAssertEqual(slots.holder(of: owner(1, 1)), 11)
        slots.release(owner(1, 1), holder: 10, now: t0 + .seconds(4))   // the old session's ghost is removed
        XCTAssertEqual(slots.holder(of: owner(1, 1)), 11)
        XCTAssertTrue(slots.waiting(now: t0 + .seconds(5)).isEmpty, "the pad is here: nothing waits")
    }

    func testAPadWithoutItsOwnIdentityIsKnownByItsClientsSlot() {
        var slots = PlayerSlots(capacity: 4, grace: .seconds(30))
        XCTAssertEqual(slots.claim(owner(1, nil, slot: 0), holder: 1, now: t0), 1)
        XCTAssertEqual(slots.claim(owner(1, nil, slot: 1), holder: 1, now: t0), 2)
        slots.release(owner(1, nil, slot: 0), holder: 1, now: t0)
        XCTAssertEqual(slots.claim(owner(1, nil, slot: 0), holder: 1, now: t0 + .seconds(5)), 1)
        // With an identity the client's slot does not matter: a pad that moved slots keeps its number.
        XCTAssertEqual(slots.claim(owner(1, 5, slot: 2), holder: 1, now: t0), 3)
        slots.release(owner(1, 5, slot: 2), holder: 1, now: t0)
        XCTAssertEqual(slots.claim(owner(1, 5, slot: 0), holder: 1, now: t0 + .seconds(5)), 3)
    }
}

/// Player numbers as sessions give them: across clients, through a reconnect, and on the pad's
/// lights unless the game set them.
final class SessionPlayerNumberTests: XCTestCase {
    let t0 = MonotonicInstant.now
    var made: [RecordedPad] = []
    var sessions: [UInt32: ClientPads] = [:]
    lazy var players: PlayerNumbers = {
        let players = PlayerNumbers(capacity: 8, grace: .seconds(60))
        players.evict = { [unowned self] session, owner in sessions[session]?.evict(owner) }
        return players
    }()

    func session(_ id: UInt32, client: String) -> ClientPads {
        let pads = ClientPads(maxPads: 4, stateLease: .milliseconds(500)) { [unowned self] arrival in
            let pad = RecordedPad(arrival: arrival)
            made.append(pad)
            return pad
        }
        pads.players = players
        pads.sessionID = id
        pads.clientIdentity = FeatureReportBytes(Array(client.utf8))!
        sessions[id] = pads
        return pads
    }

    func arrival(_ slot: UInt8, unit: String) -> WireMessage {
        .arrival(PadArrival(slot: PadSlot(slot), type: .dualSense, vendorID: 0x054c, productID: 0x0ce6, capabilities: [.rumble], name: "pad",
                            identity: PadIdentity(unit: FeatureReportBytes(Array(unit.utf8))!)))
    }

    func numbers(_ pads: ClientPads) -> [Int?] { pads.playersBySlot.map(\.player) }

    func testTwoClientsTwoPadsEachGetFourNumbersAndAReconnectKeepsThem() {
        let alice = session(1, client: "alice"), bob = session(2, client: "bob")
        _ = alice.handle(arrival(0, unit: "a0"), now: t0)
        _ = bob.handle(arrival(0, unit: "b0"), now: t0)
        _ = alice.handle(arrival(1, unit: "a1"), now: t0)
        _ = bob.handle(arrival(1, unit: "b1"), now: t0)
        XCTAssertEqual(numbers(alice), [1, 3])
        XCTAssertEqual(numbers(bob), [2, 4])
        // Alice's link drops; she reconnects in a new session with her pads the other way round,
        // before the host has noticed the old session is gone.
        let again = session(3, client: "alice")
        _ = again.handle(arrival(0, unit: "a1"), now: t0 + .seconds(3))
        XCTAssertTrue(made[2].removed, "the old session's host pad of the same pad is a ghost: removed before the new one is made")
        _ = again.handle(arrival(1, unit: "a0"), now: t0 + .seconds(3))
        XCTAssertTrue(made[0].removed)
        XCTAssertEqual(numbers(again), [3, 1], "each pad its own number back, by its identity, not its slot")
        XCTAssertEqual(numbers(alice), [], "the old session holds nothing")
        alice.close()
        XCTAssertTrue(players.slots.waiting(now: t0 + .seconds(4)).isEmpty, "the old session's close releases nothing the new one holds")
        XCTAssertEqual(numbers(bob), [2, 4])
    }

    func testANumberWaitsForItsPadAndAnotherPadDoesNotTakeIt() {
        let alice = session(1, client: "alice"), bob = session(2, client: "bob")
        _ = alice.handle(arrival(0, unit: "a0"), now: t0)
        _ = alice.handle(.removal(PadSlot(0)), now: t0 + .seconds(1))
        XCTAssertEqual(players.slots.waiting(now: t0 + .seconds(2)).map(\.number), [1])
        _ = bob.handle(arrival(0, unit: "b0"), now: t0 + .seconds(2))
        XCTAssertEqual(numbers(bob), [2])
        _ = alice.handle(arrival(0, unit: "a0"), now: t0 + .seconds(30))
        XCTAssertEqual(numbers(alice), [1])
    }

    func testThePlayerLightsShowTheNumberUnlessTheGameSetsThem() {
        let alice = session(1, client: "alice")
        _ = alice.handle(arrival(0, unit: "a0"), now: t0)
        _ = alice.handle(arrival(1, unit: "a1"), now: t0)
        var lights: [PadSlot: UInt8] = [:]
        // Due at once: the first pass after the pads were made (their `now` is a little after t0).
        for message in alice.feedback(now: t0 + .milliseconds(15)) {
            if case .hidOutput(let output) = message, output.fields.contains(.playerLEDs) { lights[output.slot] = output.playerLEDMask }
        }
        XCTAssertEqual(lights, [PadSlot(0): PlayerLEDs.playerPatterns[1], PadSlot(1): PlayerLEDs.playerPatterns[2]], "players 1 and 2, as the kernel lights them")
        // The game sets pad 0's lights: its choice is what the resends carry from then on.
        var game = HIDOutputMessage(slot: PadSlot(0), sequence: WireSequence(1))
        game.fields = .playerLEDs
        game.playerLEDMask = 0b11111
        made[0].pendingFeedback = [.hidOutput(game)]
        let set = t0 + .milliseconds(16)
        _ = alice.feedback(now: set)
        var resent: [UInt8] = []
        for offset in HeldOutput.resends {
            for message in alice.feedback(now: set + offset) {
                if case .hidOutput(let output) = message, output.slot == PadSlot(0) { resent.append(output.playerLEDMask) }
            }
        }
        XCTAssertFalse(resent.isEmpty)
        XCTAssertTrue(resent.allSatisfy { $0 == 0b11111 }, "the game's lights win: \(resent)")
        XCTAssertEqual(DualSenseDriver().playerLights(8).mask, PlayerLEDs.playerPatterns[1], "past 7 the patterns go round")
    }

    /// Each family shows a number its own way: a DualShock 4 in its lightbar (the PlayStation 4's
    /// colours), a Switch Pro on one of its four lights.
    func testEachFamilyShowsTheNumberItsOwnWay() {
        let alice = session(1, client: "alice")
        func arrival(_ slot: UInt8, _ kind: PadKind, unit: String) -> WireMessage {
            .arrival(PadArrival(slot: PadSlot(slot), type: kind, vendorID: 0, productID: 0, capabilities: [.rumble], name: "pad",
                                identity: PadIdentity(unit: FeatureReportBytes(Array(unit.utf8))!)))
        }
        _ = alice.handle(arrival(0, .dualShock4, unit: "ds4"), now: t0)
        _ = alice.handle(arrival(1, .switchPro, unit: "pro"), now: t0)
        var shown: [PadSlot: HIDOutputMessage] = [:]
        for message in alice.feedback(now: t0 + .milliseconds(15)) { if case .hidOutput(let output) = message { shown[output.slot] = output } }
        let ds4 = shown[PadSlot(0)], pro = shown[PadSlot(1)]
        XCTAssertEqual(ds4?.fields, [.lightbar], "a DualShock 4 has no player LEDs")
        XCTAssertEqual(ds4.map { RGBColor(red: $0.red, green: $0.green, blue: $0.blue) }, RGBColor(red: 0, green: 0, blue: 0x40), "player 1: blue")
        XCTAssertEqual(pro?.fields, [.playerLEDs])
        XCTAssertEqual(pro?.playerLEDMask, 0b0010, "player 2: the second light")
        XCTAssertEqual(DualShock4Driver().playerLights(5).color, RGBColor(red: 0, green: 0, blue: 0x40), "player 5 is blue again")
    }
}
