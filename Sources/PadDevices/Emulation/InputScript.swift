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

    public init(parsing text: String) throws {
        steps = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let verb = words.first else { continue }
            do { steps.append(try Self.step(verb, Array(words.dropFirst()))) }
            catch let problem as ScriptProblem { throw ParseError(line: index + 1, message: problem.message) }
        }
    }

    static func step(_ verb: String, _ args: [String]) throws -> Step {
        func number<T: FixedWidthInteger>(_ i: Int, _ what: String) throws -> T {
            guard i < args.count, let v = T(args[i]) else {
                throw ScriptProblem("'\(verb)' needs \(what) (\(T.min)...\(T.max)) as argument \(i + 1)")
            }
            return v
        }
        func buttons() throws -> [String] {
            let known = GamepadButtons.named.map(\.name)
            guard !args.isEmpty else { throw ScriptProblem("'\(verb)' needs button names: \(known.joined(separator: ", "))") }
            for name in args where !known.contains(name) { throw ScriptProblem("unknown button '\(name)'; known: \(known.joined(separator: ", "))") }
            return args
        }
        switch verb {
        case "press": return .set(.press(try buttons()))
        case "release": return .set(.release(try buttons()))
        case "dpad":
            let names = DPad.allCases.map(\.name)
            guard args.count == 1, names.contains(args[0]) else { throw ScriptProblem("'dpad' needs one of \(names.joined(separator: ", "))") }
            return .set(.dpad(args[0]))
        case "left": return .set(.leftStick(try number(0, "x"), try number(1, "y")))
        case "right": return .set(.rightStick(try number(0, "x"), try number(1, "y")))
        case "l2": return .set(.l2(try number(0, "a pressure")))
        case "r2": return .set(.r2(try number(0, "a pressure")))
        case "touch":
            let slot: Int = try number(0, "a slot 0 or 1")
            guard slot == 0 || slot == 1 else { throw ScriptProblem("touch slot must be 0 or 1") }
            let x: UInt16 = try number(1, "x"), y: UInt16 = try number(2, "y")
            guard x < 1920, y < 1080 else { throw ScriptProblem("touch position must be within 1920x1080") }
            return .set(.touch(slot: slot, x: x, y: y))
        case "untouch":
            let slot: Int = try number(0, "a slot 0 or 1")
            guard slot == 0 || slot == 1 else { throw ScriptProblem("touch slot must be 0 or 1") }
            return .set(.untouch(slot: slot))
        case "gyro": return .set(.gyro(try number(0, "x"), try number(1, "y"), try number(2, "z")))
        case "accel": return .set(.accel(try number(0, "x"), try number(1, "y"), try number(2, "z")))
        case "battery":
            let percent: UInt8 = try number(0, "a percentage")
            guard percent <= 100 else { throw ScriptProblem("battery percentage must be 0...100") }
            return .set(.battery(percent: percent, charging: args.dropFirst().first == "charging"))
        case "wait": return .wait(milliseconds: try number(0, "milliseconds") as Int)
        case "repeat": return .repeatFromStart
        default: throw ScriptProblem("unknown step '\(verb)'; steps: press release dpad left right l2 r2 touch untouch gyro accel battery wait repeat")
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
    /// Without a wait, `repeat` would loop forever within one call: play such a script once.
    let canRepeat: Bool

    public init(_ script: InputScript) {
        self.script = script
        // Only a wait before the first `repeat` stops one call from looping forever.
        let firstPass = script.steps.prefix { $0 != .repeatFromStart }
        canRepeat = firstPass.contains { if case .wait(let ms) = $0 { return ms > 0 } else { return false } }
    }

    /// `now` is the time since the script started.
    public mutating func advance(to now: Duration, _ state: inout GamepadState) {
        while index < script.steps.count, now >= resumeAt {
            switch script.steps[index] {
            case .set(let change): state.apply(change); index += 1
            case .wait(let ms): resumeAt += .milliseconds(ms); index += 1
            case .repeatFromStart: index = canRepeat ? 0 : script.steps.count
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

