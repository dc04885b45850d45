import HIDCodecs

/// A rumble track: levels held for durations, played in order. Built-ins and a small text format:
/// one step per line, `LOW HIGH MILLISECONDS`, `#` starts a comment.
public struct RumblePattern: Equatable, Sendable {
    public struct Step: Equatable, Sendable {
        public var levels: MotorLevels
        public var duration: Duration
        public init(_ low: UInt8, _ high: UInt8, milliseconds: Int) {
            levels = MotorLevels(low: low, high: high); duration = .milliseconds(milliseconds)
        }
    }
    public var steps: [Step]
    public init(steps: [Step]) { self.steps = steps }

    public var duration: Duration { steps.reduce(.zero) { $0 + $1.duration } }

    public static let builtIn: [String: RumblePattern] = [
        "pulse": RumblePattern(steps: [Step(200, 200, milliseconds: 150), Step(0, 0, milliseconds: 150)]),
        "ramp": RumblePattern(steps: stride(from: 16, through: 256, by: 16).map { Step(UInt8($0 - 1), UInt8(($0 - 1) / 2), milliseconds: 60) }
                                     + [Step(0, 0, milliseconds: 100)]),
        // lub-dub, rest: two beats of the heavy motor
        "heartbeat": RumblePattern(steps: [Step(255, 0, milliseconds: 100), Step(0, 0, milliseconds: 120),
                                           Step(180, 0, milliseconds: 90), Step(0, 0, milliseconds: 590)]),
    ]

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case badLine(number: Int, text: String)
        case empty
        public var description: String {
            switch self {
            case .badLine(let n, let text): return "pattern line \(n) '\(text.prefix(40))' is not 'LOW HIGH MILLISECONDS' (LOW and HIGH 0-255, MILLISECONDS 1-65535)"
            case .empty: return "the pattern has no steps; write one 'LOW HIGH MILLISECONDS' per line"
            }
        }
    }

    public init(text: String) throws(ParseError) {
        var steps: [Step] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if words.isEmpty { continue }
            guard words.count == 3, let low = UInt8(words[0]), let high = UInt8(words[1]), let ms = Int(words[2]), (1...65535).contains(ms) else {
                throw .badLine(number: index + 1, text: String(raw))
            }
            steps.append(Step(low, high, milliseconds: ms))
        }
        guard !steps.isEmpty else { throw .empty }
        self.init(steps: steps)
    }
}
