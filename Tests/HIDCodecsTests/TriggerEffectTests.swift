import XCTest
@testable import HIDCodecs

/// Expected blocks follow dualsensectl's main.c (command_trigger_* and trigger_bitpacking_array), which
/// implements Nielk1's TriggerEffectGenerator encodings; pydualsense's raw blocks are in OutputReportTests.
final class TriggerEffectTests: XCTestCase {
    func testEncodingsFollowDualsensectl() throws {
        XCTAssertEqual(try TriggerEffect.off.encoded(), [0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        // feedback 3 5: zones 3...9 active (0x03f8), strength-1 = 4 packed 3 bits per zone.
        XCTAssertEqual(try TriggerEffect.feedback(position: 3, strength: 5).encoded(), [0x21, 0xF8, 0x03, 0x00, 0x48, 0x92, 0x24, 0, 0, 0, 0])
        // vibration 2 8 40: zones 2...9, amplitude-1 = 7, frequency in parameter 9.
        XCTAssertEqual(try TriggerEffect.vibration(position: 2, amplitude: 8, frequency: 40).encoded(), [0x26, 0xFC, 0x03, 0xC0, 0xFF, 0xFF, 0x3F, 0, 0, 40, 0])
        // weapon 2 5 8: start/stop bits (1<<2 | 1<<5) = 0x24, strength-1.
        XCTAssertEqual(try TriggerEffect.weapon(start: 2, end: 5, strength: 8).encoded(), [0x25, 0x24, 0x00, 7, 0, 0, 0, 0, 0, 0, 0])
        // bow 1 8 3 6: zones 0x0102, (3-1) | (6-1)<<3 = 0x2a.
        XCTAssertEqual(try TriggerEffect.bow(start: 1, end: 8, strength: 3, snapForce: 6).encoded(), [0x22, 0x02, 0x01, 0x2A, 0, 0, 0, 0, 0, 0, 0])
        // galloping 0 9 2 5 3: zones 0x0201, second | first<<3 = 5 | 16 = 0x15, frequency.
        XCTAssertEqual(try TriggerEffect.galloping(start: 0, end: 9, firstFoot: 2, secondFoot: 5, frequency: 3).encoded(), [0x23, 0x01, 0x02, 0x15, 3, 0, 0, 0, 0, 0, 0])
        // machine 1 9 7 1 5 10: zones 0x0202, a | b<<3 = 0x0f, frequency, period.
        XCTAssertEqual(try TriggerEffect.machine(start: 1, end: 9, amplitudeA: 7, amplitudeB: 1, frequency: 5, period: 10).encoded(), [0x27, 0x02, 0x02, 0x0F, 5, 10, 0, 0, 0, 0, 0])
        XCTAssertEqual(try TriggerEffect.feedbackZones(strengths: [0, 0, 0, 5, 5, 5, 5, 5, 5, 5]).encoded(),
                       try TriggerEffect.feedback(position: 3, strength: 5).encoded())
    }

    func testRangeErrorsSayTheValidRange() {
        XCTAssertThrowsError(try TriggerEffect.weapon(start: 1, end: 5, strength: 3).encoded()) {
            XCTAssertEqual(($0 as? TriggerEffectError)?.description, "start is 1; it must be between 2 and 7")
        }
        XCTAssertThrowsError(try TriggerEffect.weapon(start: 4, end: 4, strength: 3).encoded()) {
            XCTAssertEqual($0 as? TriggerEffectError, .outOfRange(parameter: "end", value: 4, valid: "between 5 and 8"))
        }
        XCTAssertThrowsError(try TriggerEffect.feedback(position: 10, strength: 1).encoded())
        XCTAssertThrowsError(try TriggerEffect.vibration(position: 0, amplitude: 1, frequency: 0).encoded())
        XCTAssertThrowsError(try TriggerEffect.feedbackZones(strengths: [1, 2]).encoded()) { XCTAssertEqual($0 as? TriggerEffectError, .wrongZoneCount(2)) }
        XCTAssertThrowsError(try TriggerEffect.raw(mode: 0xFD, parameters: []).encoded()) { XCTAssertEqual($0 as? TriggerEffectError, .debugMode(0xFD)) }
    }

    /// Nielk1's Simple_* modes take byte parameters: Simple_Vibration writes Off instead for a zero frequency or
    /// amplitude, and a weapon section cannot end before it starts. Within those, every byte is accepted.
    func testSimpleModesCheckTheirRanges() throws {
        XCTAssertEqual(try TriggerEffect.simpleFeedback(position: 255, strength: 0).encoded(), [0x01, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(try TriggerEffect.simpleWeapon(start: 100, end: 100, strength: 255).encoded(), [0x02, 100, 100, 255, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(try TriggerEffect.simpleVibration(frequency: 1, amplitude: 255, position: 0).encoded(), [0x06, 1, 255, 0, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertThrowsError(try TriggerEffect.simpleWeapon(start: 200, end: 100, strength: 8).encoded()) {
            XCTAssertEqual($0 as? TriggerEffectError, .outOfRange(parameter: "end", value: 100, valid: "between 200 and 255"))
        }
        XCTAssertThrowsError(try TriggerEffect.simpleVibration(frequency: 0, amplitude: 5, position: 3).encoded()) {
            XCTAssertEqual($0 as? TriggerEffectError, .outOfRange(parameter: "frequency", value: 0, valid: "between 1 and 255"))
        }
        XCTAssertThrowsError(try TriggerEffect.simpleVibration(frequency: 30, amplitude: 0, position: 3).encoded())

        // Through the grammar's numeric modes too, which used to pass any bytes on.
        XCTAssertEqual(try TriggerCommand(arguments: ["left", "6", "30", "5"]).effect, .simpleVibration(frequency: 30, amplitude: 5, position: 0))
        XCTAssertThrowsError(try TriggerCommand(arguments: ["left", "6", "0", "5", "3"])) {
            XCTAssertEqual(($0 as? TriggerGrammarError)?.description, "frequency is 0; it must be between 1 and 255")
        }
        XCTAssertThrowsError(try TriggerCommand(arguments: ["right", "2", "200", "100", "8"]))
        XCTAssertThrowsError(try TriggerCommand(arguments: ["right", "1", "0", "255", "7"])) {
            XCTAssertEqual($0 as? TriggerGrammarError, .wrongCount(effect: "1", expected: "at most 2 parameters", got: 3))
        }
        // Decoding stays total: a game's out-of-range simple block is kept verbatim.
        XCTAssertEqual(try TriggerEffect(block: [0x06, 0, 5, 3, 0, 0, 0, 0, 0, 0, 0]), .raw(mode: 0x06, parameters: [0, 5, 3, 0, 0, 0, 0, 0, 0, 0]))
    }

    func testParserIsTotalAndRoundTrips() throws {
        let typed: [TriggerEffect] = [.off, .feedback(position: 3, strength: 5), .weapon(start: 2, end: 5, strength: 8),
                                      .vibration(position: 2, amplitude: 8, frequency: 40), .bow(start: 1, end: 8, strength: 3, snapForce: 6),
                                      .galloping(start: 0, end: 9, firstFoot: 2, secondFoot: 5, frequency: 3),
                                      .machine(start: 1, end: 9, amplitudeA: 7, amplitudeB: 1, frequency: 5, period: 10),
                                      .feedbackZones(strengths: [8, 0, 1, 0, 2, 0, 3, 0, 4, 0]), .simpleFeedback(position: 0, strength: 255)]
        for effect in typed {
            XCTAssertEqual(try TriggerEffect(block: effect.encoded()), effect)
        }
        // pydualsense's Rigid_AB block is not a valid weapon effect (zones 0 and 9): it stays raw.
        let rigidAB: [UInt8] = [0x25, 1, 2, 3, 4, 5, 6, 0, 0, 7, 0]
        XCTAssertEqual(try TriggerEffect(block: rigidAB), .raw(mode: 0x25, parameters: Array(rigidAB[1...])))
        for mode in 0xFC...0xFE {
            XCTAssertThrowsError(try TriggerEffect(block: [UInt8(mode)] + [UInt8](repeating: 0, count: 10)))
        }
        XCTAssertThrowsError(try TriggerEffect(block: [0x21]))
        for _ in 0..<5000 {
            let block = (0..<11).map { _ in UInt8.random(in: 0...255) }
            if let effect = try? TriggerEffect(block: block) { XCTAssertEqual(try effect.encoded(), block) }
        }
    }

    func testDualsensectlGrammar() throws {
        XCTAssertEqual(try TriggerCommand(arguments: ["left", "off"]), TriggerCommand(side: .left, effect: .off))
        XCTAssertEqual(try TriggerCommand(arguments: ["both", "feedback", "3", "5"]).effect, .feedback(position: 3, strength: 5))
        XCTAssertEqual(try TriggerCommand(arguments: ["right", "weapon", "2", "5", "8"]).effect, .weapon(start: 2, end: 5, strength: 8))
        XCTAssertEqual(try TriggerCommand(arguments: ["right", "machine", "1", "9", "7", "1", "5", "10"]).effect,
                       .machine(start: 1, end: 9, amplitudeA: 7, amplitudeB: 1, frequency: 5, period: 10))
        XCTAssertEqual(try TriggerCommand(arguments: ["left", "vibration-raw"] + (0..<10).map { String($0 % 9) } + ["30"]).effect,
                       .vibrationZones(amplitudes: (0..<10).map { UInt8($0 % 9) }, frequency: 30))
        XCTAssertEqual(try TriggerCommand(arguments: ["left", "1", "0", "255"]).effect, .simpleFeedback(position: 0, strength: 255))
        XCTAssertEqual(try TriggerCommand(arguments: ["left", "0x21", "0xf8", "0x03", "0x00", "0x48", "0x92", "0x24"]).effect, .feedback(position: 3, strength: 5))
        XCTAssertEqual(try TriggerCommand(arguments: ["left", "0x21", "0xf8", "03", "0", "0110", "0x92", "044"]).effect, .feedback(position: 3, strength: 5),
                       "0110 and 044 are octal for 0x48 and 0x24, as strtol(s, NULL, 0) reads them")
        XCTAssertEqual(try TriggerCommand(arguments: ["right", "weapon", "02", "0X5", "010"]).effect, .weapon(start: 2, end: 5, strength: 8))
        XCTAssertThrowsError(try TriggerCommand(arguments: ["left", "feedback", "3", "09"])) { XCTAssertEqual($0 as? TriggerGrammarError, .notANumber("09")) }
        XCTAssertThrowsError(try TriggerCommand(arguments: ["up", "off"])) { XCTAssertEqual($0 as? TriggerGrammarError, .badSide("up")) }
        XCTAssertThrowsError(try TriggerCommand(arguments: ["left", "feedback", "3"]))
        XCTAssertThrowsError(try TriggerCommand(arguments: ["left", "bogus"]))
        XCTAssertThrowsError(try TriggerCommand(arguments: ["left", "252"])) { XCTAssertEqual($0 as? TriggerGrammarError, .invalidEffect(.debugMode(0xFC))) }
        XCTAssertThrowsError(try TriggerCommand(arguments: ["left", "weapon", "1", "5", "3"])) {
            XCTAssertEqual(($0 as? TriggerGrammarError)?.description, "start is 1; it must be between 2 and 7")
        }
    }
}

extension TriggerEffectTests {
    /// dualsensectl reads every number with strtol(s, NULL, 0) (main.c's atoi_x): 0x hex, leading-0 octal, a sign.
    func testNumbersAreReadLikeStrtolBaseZero() {
        let cases: [(String, Int?)] = [("16", 16), ("0x10", 16), ("0X1f", 31), ("020", 16), ("0", 0), ("00", 0), ("+7", 7), ("-3", -3),
                                       (" 12", 12), ("-0x10", -16), ("08", nil), ("0x", nil), ("12abc", nil), ("", nil), ("x10", nil), ("--1", nil),
                                       ("99999999999999999999999", Int.max)]
        for (word, expected) in cases { XCTAssertEqual(NumberArgument.parse(word), expected, "'\(word)'") }
    }

    /// Found by tools/fuzz.sh (FuzzTrigger): a bow block with start zone 8 made the end range 9...8 and trapped.
    func testDependentRangesThatAreEmptyThrowInsteadOfTrapping() {
        XCTAssertThrowsError(try TriggerEffect.bow(start: 8, end: 9, strength: 1, snapForce: 1).encoded())
        XCTAssertEqual(try TriggerEffect(block: [0x22, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0]), .raw(mode: 0x22, parameters: [0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0]))
        XCTAssertThrowsError(try TriggerEffect.galloping(start: 0, end: 1, firstFoot: 7, secondFoot: 7, frequency: 1).encoded())
    }
}
