/// Which trigger(s) a command addresses.
public enum TriggerSide: String, Sendable, CaseIterable {
    case left, right, both
}

/// A parsed `trigger` command, in dualsensectl's grammar:
/// `trigger left|right|both off | feedback POSITION STRENGTH | weapon START STOP STRENGTH |
///  bow START STOP STRENGTH SNAPFORCE | galloping START STOP FIRST_FOOT SECOND_FOOT FREQUENCY |
///  machine START STOP STRENGTH_A STRENGTH_B FREQUENCY PERIOD | vibration POSITION AMPLITUDE FREQUENCY |
///  feedback-raw STRENGTH×10 | vibration-raw AMPLITUDE×10 FREQUENCY | MODE [PARAMS…]` (MODE a number, up to 9 params).
public struct TriggerCommand: Hashable, Sendable {
    public var side: TriggerSide
    public var effect: TriggerEffect

    public static let usage = """
        trigger TRIGGER off
        trigger TRIGGER feedback POSITION STRENGTH
        trigger TRIGGER weapon START STOP STRENGTH
        trigger TRIGGER bow START STOP STRENGTH SNAPFORCE
        trigger TRIGGER galloping START STOP FIRST_FOOT SECOND_FOOT FREQUENCY
        trigger TRIGGER machine START STOP STRENGTH_A STRENGTH_B FREQUENCY PERIOD
        trigger TRIGGER vibration POSITION AMPLITUDE FREQUENCY
        trigger TRIGGER feedback-raw STRENGTH[10]
        trigger TRIGGER vibration-raw AMPLITUDE[10] FREQUENCY
        trigger TRIGGER MODE [PARAMS]   (MODE a number such as 0x21; up to 9 parameters)
        trigger TRIGGER 1 POSITION STRENGTH | 2 START END STRENGTH | 6 FREQUENCY AMPLITUDE POSITION
                                        (the simple modes: byte positions over the whole travel, checked)
        TRIGGER is left, right or both
        """

    public init(side: TriggerSide, effect: TriggerEffect) { self.side = side; self.effect = effect }

    /// Parses the words after `trigger`. Numbers are read as dualsensectl reads them (`NumberArgument`), each 0...255.
    public init(arguments: [String]) throws(TriggerGrammarError) {
        guard let sideWord = arguments.first else { throw .missing("TRIGGER (left, right or both)") }
        guard let side = TriggerSide(rawValue: sideWord) else { throw .badSide(sideWord) }
        guard arguments.count >= 2 else { throw .missing("an effect (off, feedback, weapon, bow, galloping, machine, vibration, feedback-raw, vibration-raw or a mode number)") }
        let name = arguments[1]
        let rest = Array(arguments.dropFirst(2))
        func numbers(_ count: Int, _ names: String) throws(TriggerGrammarError) -> [UInt8] {
            guard rest.count == count else { throw .wrongCount(effect: name, expected: "\(count) (\(names))", got: rest.count) }
            var out: [UInt8] = []
            for word in rest { out.append(try Self.byte(word)) }
            return out
        }
        let effect: TriggerEffect
        switch name {
        case "off":
            _ = try numbers(0, "none")
            effect = .off
        case "feedback":
            let n = try numbers(2, "POSITION STRENGTH"); effect = .feedback(position: n[0], strength: n[1])
        case "weapon":
            let n = try numbers(3, "START STOP STRENGTH"); effect = .weapon(start: n[0], end: n[1], strength: n[2])
        case "bow":
            let n = try numbers(4, "START STOP STRENGTH SNAPFORCE"); effect = .bow(start: n[0], end: n[1], strength: n[2], snapForce: n[3])
        case "galloping":
            let n = try numbers(5, "START STOP FIRST_FOOT SECOND_FOOT FREQUENCY")
            effect = .galloping(start: n[0], end: n[1], firstFoot: n[2], secondFoot: n[3], frequency: n[4])
        case "machine":
            let n = try numbers(6, "START STOP STRENGTH_A STRENGTH_B FREQUENCY PERIOD")
            effect = .machine(start: n[0], end: n[1], amplitudeA: n[2], amplitudeB: n[3], frequency: n[4], period: n[5])
        case "vibration":
            let n = try numbers(3, "POSITION AMPLITUDE FREQUENCY"); effect = .vibration(position: n[0], amplitude: n[1], frequency: n[2])
        case "feedback-raw":
            effect = .feedbackZones(strengths: try numbers(10, "STRENGTH×10"))
        case "vibration-raw":
            let n = try numbers(11, "AMPLITUDE×10 FREQUENCY"); effect = .vibrationZones(amplitudes: Array(n[0..<10]), frequency: n[10])
        default:
            guard let mode = try? Self.byte(name) else { throw .unknownEffect(name) }
            guard rest.count <= 9 else { throw .wrongCount(effect: name, expected: "at most 9 parameters", got: rest.count) }
            var params: [UInt8] = []
            for word in rest { params.append(try Self.byte(word)) }
            if let simple = TriggerEffect.simple(mode, parameters: params), let count = TriggerMode(rawValue: mode)?.simpleParameterCount {
                // A simple mode is its typed effect, so its ranges are checked below like the named effects'.
                guard params.count <= count else { throw .wrongCount(effect: name, expected: "at most \(count) parameters", got: params.count) }
                effect = simple
            } else {
                // Any other numeric mode with its parameters is an 11-byte block; let the total parser name it.
                do { effect = try TriggerEffect(block: [mode] + params + [UInt8](repeating: 0, count: 10 - params.count)) }
                catch { throw .invalidEffect(error) }
            }
        }
        do { _ = try effect.encoded() } catch { throw .invalidEffect(error) }
        self.init(side: side, effect: effect)
    }

    static func byte(_ word: String) throws(TriggerGrammarError) -> UInt8 {
        guard let value = NumberArgument.parse(word) else { throw .notANumber(word) }
        guard (0...255).contains(value) else { throw .invalidEffect(.outOfRange(parameter: "'\(word)'", value: value, valid: "between 0 and 255")) }
        return UInt8(value)
    }
}

public enum TriggerGrammarError: Error, Equatable, Sendable, CustomStringConvertible {
    case missing(String)
    case badSide(String)
    case unknownEffect(String)
    case wrongCount(effect: String, expected: String, got: Int)
    case notANumber(String)
    case invalidEffect(TriggerEffectError)

    public var description: String {
        switch self {
        case .missing(let what): return "missing \(what)"
        case .badSide(let w): return "'\(w)' is not a trigger: use left, right or both"
        case .unknownEffect(let w): return "unknown effect '\(w)'; known: off, feedback, weapon, bow, galloping, machine, vibration, feedback-raw, vibration-raw, or a numeric mode"
        case .wrongCount(let e, let expected, let got): return "\(e) takes \(expected), got \(got)"
        case .notANumber(let w): return "'\(w)' is not a number (\(NumberArgument.forms))"
        case .invalidEffect(let e): return e.description
        }
    }
}

/// A number on the command line as dualsensectl reads it: `strtol(s, NULL, 0)`, so `16`, `0x10` and `020`
/// (a leading 0 means octal) are all sixteen, with an optional sign. Stricter than strtol in one way: the
/// whole word must be the number, so `12abc` or `08` (8 is not an octal digit) are refused instead of
/// silently read as 12 or 0.
public enum NumberArgument {
    public static let forms = "decimal, 0x-prefixed hex or 0-prefixed octal"

    /// The value, or nil when the word is not a whole number. Beyond Int's range it saturates like strtol.
    public static func parse(_ word: String) -> Int? {
        var text = Substring(word).drop(while: { $0 == " " || $0 == "\t" })
        var negative = false
        if let sign = text.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            text = text.dropFirst()
        }
        let radix: Int
        if text.count > 2, text.hasPrefix("0x") || text.hasPrefix("0X") {
            radix = 16; text = text.dropFirst(2)
        } else if text.count > 1, text.hasPrefix("0") {
            radix = 8; text = text.dropFirst()
        } else {
            radix = 10
        }
        guard !text.isEmpty, text.allSatisfy({ $0.hexDigitValue.map { $0 < radix } ?? false }) else { return nil }
        guard let magnitude = Int(text, radix: radix) else { return negative ? Int.min : Int.max }
        return negative ? -magnitude : magnitude
    }
}
