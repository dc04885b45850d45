/// DualSense adaptive-trigger effects, encoded as the 11-byte block of the output report
/// (mode byte + 10 parameters) following Nielk1's TriggerEffectGenerator conventions, which
/// dualsensectl also uses. Zones are the trigger's travel split into 10 positions (0 = released).
public enum TriggerEffect: Hashable, Sendable {
    case off
    /// Resistance from `position` (0...9) to the end, `strength` 1...8.
    case feedback(position: UInt8, strength: UInt8)
    /// A gun-like click: resistance from `start` (2...7) to `end` (start+1...8), then release.
    case weapon(start: UInt8, end: UInt8, strength: UInt8)
    /// Vibration from `position` (0...9) on, `amplitude` 1...8, `frequency` 1...255 Hz.
    case vibration(position: UInt8, amplitude: UInt8, frequency: UInt8)
    /// Like weapon but snaps back: `start` 1...8 (as dualsensectl), `end` start+1...8, strength and snap force 1...8.
    case bow(start: UInt8, end: UInt8, strength: UInt8, snapForce: UInt8)
    /// Hoof-beat pattern: `start` 0...8, `end` start+1...9, `firstFoot` 0...6, `secondFoot` firstFoot+1...7, `frequency` 1...255.
    case galloping(start: UInt8, end: UInt8, firstFoot: UInt8, secondFoot: UInt8, frequency: UInt8)
    /// Alternating amplitudes: `start` 1...8, `end` start+1...9, `amplitudeA`/`amplitudeB` 0...7, `frequency` 1...255, `period` 0...255.
    case machine(start: UInt8, end: UInt8, amplitudeA: UInt8, amplitudeB: UInt8, frequency: UInt8, period: UInt8)
    /// Per-zone resistance, each 0 (none) ... 8.
    case feedbackZones(strengths: [UInt8])
    /// Per-zone vibration amplitude, each 0 ... 8, at `frequency` 1...255.
    case vibrationZones(amplitudes: [UInt8], frequency: UInt8)
    /// Older firmware modes (Nielk1's "Simple_*", 0x01/0x02/0x06) with byte parameters: positions span the
    /// whole travel, 0 (released) ... 255, instead of 10 zones, and strengths are whole bytes. Nielk1 calls
    /// them modes "with no parameter protections"; the only limits that mean anything are checked:
    /// resistance from `position` with `strength`, any bytes.
    case simpleFeedback(position: UInt8, strength: UInt8)
    /// Resistance between `start` and `end` (end start...255: a section cannot end before it starts).
    case simpleWeapon(start: UInt8, end: UInt8, strength: UInt8)
    /// Vibration from `position` at `frequency` 1...255 Hz and `amplitude` 1...255 (Nielk1 sends Off for a
    /// zero frequency or amplitude: that is no vibration).
    case simpleVibration(frequency: UInt8, amplitude: UInt8, position: UInt8)
    /// Anything else the firmware accepts, kept verbatim.
    case raw(mode: UInt8, parameters: [UInt8])
}

public enum TriggerMode: UInt8, Sendable, CaseIterable {
    case simpleFeedback = 0x01, simpleWeapon = 0x02, off = 0x05, simpleVibration = 0x06
    case feedback = 0x21, bow = 0x22, galloping = 0x23, weapon = 0x25, vibration = 0x26, machine = 0x27
    /// Sony debug/calibration modes: they can leave the trigger motor in a bad state, so we never send them.
    public static let debugModes: ClosedRange<UInt8> = 0xFC...0xFE

    /// How many parameters a simple mode has (its block's other bytes are zero); nil for the other modes.
    public var simpleParameterCount: Int? {
        switch self {
        case .simpleFeedback: return 2
        case .simpleWeapon, .simpleVibration: return 3
        default: return nil
        }
    }
}

public enum TriggerEffectError: Error, Equatable, Sendable, CustomStringConvertible {
    case outOfRange(parameter: String, value: Int, valid: String)
    case debugMode(UInt8)
    case wrongZoneCount(Int)
    case wrongBlockSize(Int)

    public var description: String {
        switch self {
        case .outOfRange(let p, let v, let valid): return "\(p) is \(v); it must be \(valid)"
        case .debugMode(let m): return "mode \(hexByte(m)) is a Sony debug/calibration mode (0xfc-0xfe) and is refused"
        case .wrongZoneCount(let n): return "\(n) zone values given; exactly 10 are needed"
        case .wrongBlockSize(let n): return "a trigger block is 11 bytes (mode + 10 parameters), got \(n)"
        }
    }
}

extension TriggerEffect {
    public static let blockSize = 11
    public static let zoneCount = 10

    private static func check(_ name: String, _ value: UInt8, _ range: ClosedRange<Int>) throws(TriggerEffectError) {
        try check(name, value, from: range.lowerBound, to: range.upperBound)
    }

    /// Bounds that depend on another parameter (end > start) can be empty: that is an error, never a trap.
    private static func check(_ name: String, _ value: UInt8, from lower: Int, to upper: Int) throws(TriggerEffectError) {
        guard lower <= upper, (lower...upper).contains(Int(value)) else {
            throw .outOfRange(parameter: name, value: Int(value), valid: "between \(lower) and \(upper)")
        }
    }

    /// Zone bitmask (bit per zone) and 3-bit values per zone, as Nielk1 packs feedback and vibration.
    private static func packZones(_ values: [UInt8], mode: UInt8, frequency: UInt8) -> [UInt8] {
        var active: UInt16 = 0
        var packed: UInt32 = 0
        for (i, value) in values.enumerated() where value > 0 {
            packed |= UInt32((value - 1) & 0x07) << (3 * UInt32(i))
            active |= 1 << UInt16(i)
        }
        return [mode, UInt8(active & 0xFF), UInt8(active >> 8),
                UInt8(packed & 0xFF), UInt8((packed >> 8) & 0xFF), UInt8((packed >> 16) & 0xFF), UInt8(packed >> 24),
                0, 0, frequency, 0]
    }

    private static func startStop(_ start: UInt8, _ end: UInt8) -> (UInt8, UInt8) {
        let zones = UInt16(1) << UInt16(start) | UInt16(1) << UInt16(end)
        return (UInt8(zones & 0xFF), UInt8(zones >> 8))
    }

    /// The 11 bytes for the output report. Throws with the valid range when a parameter is out of it.
    public func encoded() throws(TriggerEffectError) -> [UInt8] {
        switch self {
        case .off:
            return [TriggerMode.off.rawValue] + [UInt8](repeating: 0, count: 10)
        case .feedback(let position, let strength):
            try Self.check("position", position, 0...9)
            try Self.check("strength", strength, 1...8)
            return Self.packZones((0..<10).map { $0 >= Int(position) ? strength : 0 }, mode: TriggerMode.feedback.rawValue, frequency: 0)
        case .weapon(let start, let end, let strength):
            try Self.check("start", start, 2...7)
            try Self.check("end", end, from: Int(start) + 1, to: 8)
            try Self.check("strength", strength, 1...8)
            let (lo, hi) = Self.startStop(start, end)
            return [TriggerMode.weapon.rawValue, lo, hi, strength - 1, 0, 0, 0, 0, 0, 0, 0]
        case .vibration(let position, let amplitude, let frequency):
            try Self.check("position", position, 0...9)
            try Self.check("amplitude", amplitude, 1...8)
            try Self.check("frequency", frequency, 1...255)
            return Self.packZones((0..<10).map { $0 >= Int(position) ? amplitude : 0 }, mode: TriggerMode.vibration.rawValue, frequency: frequency)
        case .bow(let start, let end, let strength, let snapForce):
            try Self.check("start", start, 1...8)
            try Self.check("end", end, from: Int(start) + 1, to: 8)
            try Self.check("strength", strength, 1...8)
            try Self.check("snap force", snapForce, 1...8)
            let (lo, hi) = Self.startStop(start, end)
            return [TriggerMode.bow.rawValue, lo, hi, (strength - 1) & 0x07 | ((snapForce - 1) & 0x07) << 3, 0, 0, 0, 0, 0, 0, 0]
        case .galloping(let start, let end, let firstFoot, let secondFoot, let frequency):
            try Self.check("start", start, 0...8)
            try Self.check("end", end, from: Int(start) + 1, to: 9)
            try Self.check("first foot", firstFoot, 0...6)
            try Self.check("second foot", secondFoot, from: Int(firstFoot) + 1, to: 7)
            try Self.check("frequency", frequency, 1...255)
            let (lo, hi) = Self.startStop(start, end)
            return [TriggerMode.galloping.rawValue, lo, hi, secondFoot & 0x07 | (firstFoot & 0x07) << 3, frequency, 0, 0, 0, 0, 0, 0]
        case .machine(let start, let end, let a, let b, let frequency, let period):
            try Self.check("start", start, 1...8)
            try Self.check("end", end, from: Int(start) + 1, to: 9)
            try Self.check("amplitude A", a, 0...7)
            try Self.check("amplitude B", b, 0...7)
            try Self.check("frequency", frequency, 1...255)
            let (lo, hi) = Self.startStop(start, end)
            return [TriggerMode.machine.rawValue, lo, hi, a & 0x07 | (b & 0x07) << 3, frequency, period, 0, 0, 0, 0, 0]
        case .feedbackZones(let strengths):
            guard strengths.count == Self.zoneCount else { throw .wrongZoneCount(strengths.count) }
            for (i, s) in strengths.enumerated() { try Self.check("strength[\(i)]", s, 0...8) }
            return Self.packZones(strengths, mode: TriggerMode.feedback.rawValue, frequency: 0)
        case .vibrationZones(let amplitudes, let frequency):
            guard amplitudes.count == Self.zoneCount else { throw .wrongZoneCount(amplitudes.count) }
            for (i, a) in amplitudes.enumerated() { try Self.check("amplitude[\(i)]", a, 0...8) }
            try Self.check("frequency", frequency, 1...255)
            return Self.packZones(amplitudes, mode: TriggerMode.vibration.rawValue, frequency: frequency)
        case .simpleFeedback(let position, let strength):
            return [TriggerMode.simpleFeedback.rawValue, position, strength, 0, 0, 0, 0, 0, 0, 0, 0]
        case .simpleWeapon(let start, let end, let strength):
            try Self.check("end", end, from: Int(start), to: 255)
            return [TriggerMode.simpleWeapon.rawValue, start, end, strength, 0, 0, 0, 0, 0, 0, 0]
        case .simpleVibration(let frequency, let amplitude, let position):
            try Self.check("frequency", frequency, 1...255)
            try Self.check("amplitude", amplitude, 1...255)
            return [TriggerMode.simpleVibration.rawValue, frequency, amplitude, position, 0, 0, 0, 0, 0, 0, 0]
        case .raw(let mode, let parameters):
            guard !TriggerMode.debugModes.contains(mode) else { throw .debugMode(mode) }
            guard parameters.count <= 10 else { throw .wrongBlockSize(parameters.count + 1) }
            return [mode] + parameters + [UInt8](repeating: 0, count: 10 - parameters.count)
        }
    }

    /// Total parser: any 11 bytes become a typed effect when they are exactly what that effect encodes to,
    /// otherwise `.raw`. Only the debug modes are refused.
    public init(block: [UInt8]) throws(TriggerEffectError) {
        guard block.count == Self.blockSize else { throw .wrongBlockSize(block.count) }
        let mode = block[0]
        guard !TriggerMode.debugModes.contains(mode) else { throw .debugMode(mode) }
        let p = Array(block[1...])
        let raw = TriggerEffect.raw(mode: mode, parameters: p)
        var candidates: [TriggerEffect] = []
        let zones = UInt16(p[0]) | UInt16(p[1]) << 8
        let set = (0..<10).filter { zones & (1 << UInt16($0)) != 0 }.map(UInt8.init)
        let packed = UInt32(p[2]) | UInt32(p[3]) << 8 | UInt32(p[4]) << 16 | UInt32(p[5]) << 24
        let perZone: [UInt8] = (0..<10).map { zones & (1 << UInt16($0)) != 0 ? UInt8((packed >> (3 * UInt32($0))) & 7) + 1 : 0 }
        switch TriggerMode(rawValue: mode) {
        case .off?: candidates = [.off]
        case .simpleFeedback?, .simpleWeapon?, .simpleVibration?: candidates = [Self.simple(mode, parameters: p)!]
        case .feedback?:
            if let first = perZone.firstIndex(where: { $0 > 0 }), perZone[first...].allSatisfy({ $0 == perZone[first] }) {
                candidates.append(.feedback(position: UInt8(first), strength: perZone[first]))
            }
            candidates.append(.feedbackZones(strengths: perZone))
        case .vibration?:
            if let first = perZone.firstIndex(where: { $0 > 0 }), perZone[first...].allSatisfy({ $0 == perZone[first] }) {
                candidates.append(.vibration(position: UInt8(first), amplitude: perZone[first], frequency: p[8]))
            }
            candidates.append(.vibrationZones(amplitudes: perZone, frequency: p[8]))
        case .weapon?:
            if set.count == 2, p[2] < 8 { candidates = [.weapon(start: set[0], end: set[1], strength: p[2] + 1)] }
        case .bow?:
            if set.count == 2 { candidates = [.bow(start: set[0], end: set[1], strength: (p[2] & 7) + 1, snapForce: ((p[2] >> 3) & 7) + 1)] }
        case .galloping?:
            if set.count == 2 { candidates = [.galloping(start: set[0], end: set[1], firstFoot: (p[2] >> 3) & 7, secondFoot: p[2] & 7, frequency: p[3])] }
        case .machine?:
            if set.count == 2 { candidates = [.machine(start: set[0], end: set[1], amplitudeA: p[2] & 7, amplitudeB: (p[2] >> 3) & 7, frequency: p[3], period: p[4])] }
        case nil: break
        }
        // Only keep an interpretation that reproduces the bytes exactly (valid ranges included).
        self = candidates.first { (try? $0.encoded()) == block } ?? raw
    }
}

extension TriggerEffect {
    /// The simple-mode effect (0x01, 0x02, 0x06) its leading parameters describe; nil for other modes.
    public static func simple(_ mode: UInt8, parameters: [UInt8]) -> TriggerEffect? {
        let p = parameters + [UInt8](repeating: 0, count: max(0, 3 - parameters.count))
        switch TriggerMode(rawValue: mode) {
        case .simpleFeedback?: return .simpleFeedback(position: p[0], strength: p[1])
        case .simpleWeapon?: return .simpleWeapon(start: p[0], end: p[1], strength: p[2])
        case .simpleVibration?: return .simpleVibration(frequency: p[0], amplitude: p[1], position: p[2])
        default: return nil
        }
    }
}
