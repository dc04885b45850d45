import HIDCodecs
import MonotonicTime
import XCTest
@testable import Feedback

/// ff-memless's rules (drivers/input/ff-memless.c, ml_ff_playback and ml_get_combo_effect): an
/// effect starts `delay` after play, stops `length` later, replays while its count lasts; length 0
/// plays until stopped; concurrent effects add up per motor.
final class MemlessPlaybackTests: XCTestCase {
    let strong = MotorLevels(low: 200, high: 0)

    func testAnEffectPlaysForItsLengthAndStopsByItself() {
        var playback = MemlessPlayback()
        playback.upload(id: 0, .init(levels: strong, length: .milliseconds(300)), now: .zero)
        playback.play(id: 0, count: 1, now: .zero)
        XCTAssertEqual(playback.levels(now: .milliseconds(299)), strong)
        XCTAssertEqual(playback.nextChange(after: .milliseconds(299)), .milliseconds(300))
        XCTAssertEqual(playback.levels(now: .milliseconds(300)), .silent, "300 ms, not until the program erases it")
        XCTAssertFalse(playback.isPlaying)
    }

    /// A deadline asked for after an effect's end, before `levels` saw it, is that end: due now,
    /// not "never" (the host's loop would wait for nothing, renewing the rumble's lease).
    func testAStopThatFellDueUnseenIsStillTheNextChange() {
        var playback = MemlessPlayback()
        playback.upload(id: 0, .init(levels: strong, length: .milliseconds(300)), now: .zero)
        playback.play(id: 0, count: 1, now: .zero)
        XCTAssertEqual(playback.levels(now: .milliseconds(299)), strong)
        XCTAssertEqual(playback.nextChange(after: .milliseconds(305)), .milliseconds(300), "due, and said so")
        XCTAssertEqual(playback.levels(now: .milliseconds(305)), .silent)
        XCTAssertNil(playback.nextChange(after: .milliseconds(305)))
        // A start that fell due unseen, likewise.
        playback.upload(id: 1, .init(levels: strong, delay: .milliseconds(50), length: .milliseconds(100)), now: .milliseconds(400))
        playback.play(id: 1, count: 1, now: .milliseconds(400))
        _ = playback.levels(now: .milliseconds(410))
        XCTAssertEqual(playback.nextChange(after: .milliseconds(460)), .milliseconds(450))
    }

    func testDelayAndCountReplayTheEffect() {
        var playback = MemlessPlayback()
        playback.upload(id: 3, .init(levels: strong, delay: .milliseconds(100), length: .milliseconds(200)), now: .zero)
        playback.play(id: 3, count: 2, now: .zero)
        XCTAssertEqual(playback.levels(now: .milliseconds(50)), .silent, "not before its delay")
        XCTAssertEqual(playback.levels(now: .milliseconds(100)), strong)
        XCTAssertEqual(playback.levels(now: .milliseconds(300)), .silent, "the first play is over; the second waits its delay")
        XCTAssertEqual(playback.nextChange(after: .milliseconds(300)), .milliseconds(400))
        XCTAssertEqual(playback.levels(now: .milliseconds(450)), strong)
        XCTAssertEqual(playback.levels(now: .milliseconds(600)), .silent)
        XCTAssertFalse(playback.isPlaying, "two plays and done")
    }

    func testLengthZeroPlaysUntilStoppedAndEffectsAddUp() {
        var playback = MemlessPlayback()
        playback.upload(id: 0, .init(levels: MotorLevels(low: 200, high: 10), length: .zero), now: .zero)
        playback.upload(id: 1, .init(levels: MotorLevels(low: 100, high: 20), length: .milliseconds(50)), now: .zero)
        playback.play(id: 0, count: 1, now: .zero)
        playback.play(id: 1, count: 1, now: .zero)
        XCTAssertEqual(playback.levels(now: .milliseconds(10)), MotorLevels(low: 255, high: 30), "added, saturating")
        XCTAssertEqual(playback.levels(now: .seconds(3600)), MotorLevels(low: 200, high: 10), "length 0: still on an hour later")
        XCTAssertNil(playback.nextChange(after: .seconds(3600)))
        playback.play(id: 0, count: 0, now: .seconds(3600))
        XCTAssertEqual(playback.levels(now: .seconds(3600)), .silent, "a play with count 0 stops it")
    }

    func testReuploadingAPlayingEffectRestartsItsTimingAndErasingStopsIt() {
        var playback = MemlessPlayback()
        playback.upload(id: 0, .init(levels: strong, length: .milliseconds(100)), now: .zero)
        playback.play(id: 0, count: 1, now: .zero)
        playback.upload(id: 0, .init(levels: MotorLevels(low: 50, high: 50), length: .milliseconds(100)), now: .milliseconds(80))
        XCTAssertEqual(playback.levels(now: .milliseconds(150)), MotorLevels(low: 50, high: 50), "restarted at the upload")
        playback.erase(id: 0)
        XCTAssertEqual(playback.levels(now: .milliseconds(160)), .silent)
        for id in 0..<MemlessPlayback.maxEffects { playback.upload(id: 100 + id, .init(levels: strong, length: .zero), now: .zero) }
        XCTAssertFalse(playback.upload(id: 1000, .init(levels: strong, length: .zero), now: .zero), "the table holds 16 effects")
    }
}
