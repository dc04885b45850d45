import HIDCodecs

/// A small text script of inputs for an emulated pad, one step a line (docs/emulate-script.md):
///
///     press south l1      release south      dpad up       left 200 128     right 128 0
///     l2 255              touch 0 960 540    untouch 0     gyro 0 100 0     accel 0 8192 0
///     battery 40 charging wait 250           repeat
public struct InputScript: Equatable, Sendable {
    public enum Step: Equatable, Sendable {
        case set(Change)
        case wait(milliseconds: Int)
        case repeatFromStart
    }

    public enum Change: Equatable, Sendable {
        case press([String]), release([String]), dpad(String)
        case leftStick(UInt8, UInt8), rightStick(UInt8, UInt8), l2(UInt8), r2(UInt8)
        case touch(slot: Int, x: UInt16, y: UInt16), untouch(slot: Int)
        case gyro(Int16, Int16, Int16), accel(Int16, Int16, Int16)
        case battery(percent: UInt8, charging: Bool)
    }

    public struct ParseError: Error, CustomStringConvertible, Equatable {
        public var line: Int
        public var message: String
        public var description: String { "script line \(line): \(message)" }
    }

    public var steps: [Step]

    /// The longest single `wait`: an hour, far beyond any test or demo, and small enough that a
    /// script's total time never overflows.
    public static let longestWait = 3_600_000
    /// Scripts are hand-written; a file this long is a mistake (or an attack on a CI runner).
    public static let mostSteps = 100_000

    /// Checks the whole script before any of it runs: every line, every number against the range
    /// docs/emulate-script.md gives, and that a `repeat` has a pass that takes time to start over.
    public init(parsing text: String) throws {
        steps = []
        var lineOfStep: [Int] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            guard let verb = words.first else { continue }
            if let repeatLine = lineOfStep.last, steps.last == .repeatFromStart {
                throw ParseError(line: index + 1, message: "'repeat' on line \(repeatLine) starts over, so this step would never run")
            }
            guard steps.count < Self.mostSteps else { throw ParseError(line: index + 1, message: "a script has at most \(Self.mostSteps) steps") }
            do { steps.append(try Self.step(verb, Array(words.dropFirst()))) }
            catch let problem as ScriptProblem { throw ParseError(line: index + 1, message: problem.message) }
            lineOfStep.append(index + 1)
        }
        if steps.last == .repeatFromStart, let repeatLine = lineOfStep.last {
            guard passMilliseconds > 0 else {
                throw ParseError(line: repeatLine, message: "'repeat' starts over at once: put a 'wait' of at least 1 ms in the steps before it, or drop the 'repeat'")
            }
        }
    }

    /// How long one pass through the script takes: its waits, added up.
    public var passMilliseconds: Int {
        steps.reduce(0) { total, step in if case .wait(let ms) = step { return total + ms } else { return total } }
    }

    static func step(_ verb: String, _ args: [String]) throws -> Step {
        func number(_ i: Int, _ what: String, _ range: ClosedRange<Int>) throws -> Int {
            let expected = "'\(verb)' needs \(what) from \(range.lowerBound) to \(range.upperBound) as argument \(i + 1)"
            guard i < args.count else { throw ScriptProblem(expected) }
            guard let value = Int(args[i]), range.contains(value) else { throw ScriptProblem("\(expected), not '\(args[i].prefix(40))'") }
            return value
        }
        func exactly(_ count: Int) throws {
            guard args.count <= count else { throw ScriptProblem("'\(verb)' takes \(count) argument\(count == 1 ? "" : "s"), not \(args.count)") }
        }
        func byte(_ i: Int, _ what: String) throws -> UInt8 { UInt8(try number(i, what, 0...255)) }
        func raw(_ i: Int, _ what: String) throws -> Int16 { Int16(try number(i, what, Int(Int16.min)...Int(Int16.max))) }
        func slot() throws -> Int { try number(0, "a touch slot", 0...1) }
        func buttons() throws -> [String] {
            let known = GamepadButtons.named.map(\.name)
            guard !args.isEmpty else { throw ScriptProblem("'\(verb)' needs button names: \(known.joined(separator: ", "))") }
            for name in args where !known.contains(name) { throw ScriptProblem("unknown button '\(name.prefix(40))'; known: \(known.joined(separator: ", "))") }
            return args
        }
        switch verb {
        case "press": return .set(.press(try buttons()))
        case "release": return .set(.release(try buttons()))
        case "dpad":
            let names = DPad.allCases.map(\.name)
            guard args.count == 1, names.contains(args[0]) else { throw ScriptProblem("'dpad' needs one of \(names.joined(separator: ", "))") }
            return .set(.dpad(args[0]))
        case "left": try exactly(2); return .set(.leftStick(try byte(0, "x"), try byte(1, "y")))
        case "right": try exactly(2); return .set(.rightStick(try byte(0, "x"), try byte(1, "y")))
        case "l2": try exactly(1); return .set(.l2(try byte(0, "a pressure")))
        case "r2": try exactly(1); return .set(.r2(try byte(0, "a pressure")))
        case "touch":
            try exactly(3)
            let slot = try slot()
            return .set(.touch(slot: slot, x: UInt16(try number(1, "x", 0...1919)), y: UInt16(try number(2, "y", 0...1079))))
        case "untouch": try exactly(1); return .set(.untouch(slot: try slot()))
        case "gyro": try exactly(3); return .set(.gyro(try raw(0, "x"), try raw(1, "y"), try raw(2, "z")))
        case "accel": try exactly(3); return .set(.accel(try raw(0, "x"), try raw(1, "y"), try raw(2, "z")))
        case "battery":
            let percent = UInt8(try number(0, "a percentage", 0...100))
            guard args.count == 1 || (args.count == 2 && args[1] == "charging") else {
                throw ScriptProblem("'battery' takes a percentage and, optionally, the word 'charging'")
            }
            return .set(.battery(percent: percent, charging: args.count == 2))
        case "wait": try exactly(1); return .wait(milliseconds: try number(0, "milliseconds", 0...longestWait))
        case "repeat": try exactly(0); return .repeatFromStart
        default: throw ScriptProblem("unknown step '\(verb.prefix(40))'; steps: press release dpad left right l2 r2 touch untouch gyro accel battery wait repeat")
        }
    }
}

/// Plays a script against a clock: every step due by `now` is applied in order. Waits add up
/// from the script's start, not from when `advance` happened to run, so a late tick does not
/// stretch the script.
public struct InputScriptPlayer: Sendable {
    public let script: InputScript
    var index = 0
    var resumeAt: Duration = .zero
    /// How much time one pass takes; `InputScript` refuses a `repeat` whose pass takes none.
    let passLength: Duration
    let repeats: Bool

    public init(_ script: InputScript) {
        self.script = script
        passLength = .milliseconds(script.passMilliseconds)
        repeats = passLength > .zero && script.steps.contains(.repeatFromStart)
    }

    /// `now` is the time since the script started. A caller that fell more than a pass behind (a
    /// stopped process, a suspended machine) skips the passes it missed instead of replaying them.
    public mutating func advance(to now: Duration, _ state: inout GamepadState) {
        if repeats, now - resumeAt > passLength * 2 {
            resumeAt += passLength * Int((now - resumeAt) / passLength - 1)
        }
        // Bounded even for a script built without the parser's checks: one pass's steps at most.
        var budget = script.steps.count + 1
        while index < script.steps.count, now >= resumeAt, budget > 0 {
            budget -= 1
            switch script.steps[index] {
            case .set(let change): state.apply(change); index += 1
            case .wait(let ms): resumeAt += .milliseconds(ms); index += 1
            case .repeatFromStart: index = repeats ? 0 : script.steps.count
            }
        }
    }
}

struct ScriptProblem: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

extension GamepadState {
    /// A DualSense lying still on a table: sticks centred, +1 g on the accelerometer's Y axis
    /// (8192 counts per g), battery full, no touch.
    public static var dualSenseAtRest: GamepadState {
        var state = GamepadState()
        state.format = .dualSenseUSB
        state.leftStick = StickPosition(x: 128, y: 128)
        state.rightStick = StickPosition(x: 128, y: 128)
        state.hasMotion = true
        state.motion.count = 1
        state.motion.first.accel = Vector3(x: 0, y: 8192, z: 0)
        state.hasTouch = true
        state.battery = BatteryStatus(percent: 100, state: .discharging)
        return state
    }

    public mutating func apply(_ change: InputScript.Change) {
        switch change {
        case .press(let names): for name in names { buttons.insert(GamepadButtons(name: name) ?? []) }
        case .release(let names): for name in names { buttons.remove(GamepadButtons(name: name) ?? []) }
        case .dpad(let name): dpad = DPad.allCases.first { $0.name == name } ?? .none
        case .leftStick(let x, let y): leftStick = StickPosition(x: UInt16(x), y: UInt16(y))
        case .rightStick(let x, let y): rightStick = StickPosition(x: UInt16(x), y: UInt16(y))
        case .l2(let v): l2 = v
        case .r2(let v): r2 = v
        case .touch(let slot, let x, let y):
            // A new contact takes the next id from the pad's 7-bit counter; moving keeps it.
            let current = slot == 0 ? touch0 : touch1
            let id = current.active ? current.id : (max(touch0.id, touch1.id) &+ 1) & 0x7f
            let point = TouchPoint(id: id, active: true, x: x, y: y)
            if slot == 0 { touch0 = point } else { touch1 = point }
        case .untouch(let slot):
            if slot == 0 { touch0.active = false } else { touch1.active = false }
        case .gyro(let x, let y, let z): motion.first.gyro = Vector3(x: x, y: y, z: z)
        case .accel(let x, let y, let z): motion.first.accel = Vector3(x: x, y: y, z: z)
        case .battery(let percent, let charging):
            battery = BatteryStatus(percent: percent, state: charging ? .charging : .discharging)
        }
    }
}

