/// padgate wire protocol v1 (docs/wire.md): the messages that travel inside sealed datagrams.
/// Every message is `type u8 | length u16 | body`, big-endian, so a receiver skips types it does
/// not know and ignores trailing fields a newer sender added.

import HIDCodecs
import MonotonicTime

public let wireVersion: UInt8 = 1

/// Which of a client's pads a message is about. Assigned by the client, 0...maxPads-1.
public struct PadSlot: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }
    public var description: String { "slot \(rawValue)" }
}

/// A per-pad 16-bit sequence that wraps; "newer" is serial-number arithmetic (RFC 1982), so a
/// reordered or replayed old snapshot never overwrites a newer one.
public struct WireSequence: Hashable, Sendable {
    public var rawValue: UInt16
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }
    public func isNewer(than other: WireSequence) -> Bool { Serial16.distance(rawValue, from: other.rawValue) > 0 }
    public var next: WireSequence { WireSequence(rawValue &+ 1) }
    /// A rumble lease's sequence before the host's session numbers it (`ClientPads` alone does).
    public static let unnumbered = WireSequence(0)
}


public struct WireCapabilities: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let analogTriggers = WireCapabilities(rawValue: 1 << 0)
    public static let rumble = WireCapabilities(rawValue: 1 << 1)
    public static let triggerRumble = WireCapabilities(rawValue: 1 << 2)
    public static let touchpad = WireCapabilities(rawValue: 1 << 3)
    public static let accelerometer = WireCapabilities(rawValue: 1 << 4)
    public static let gyro = WireCapabilities(rawValue: 1 << 5)
    public static let battery = WireCapabilities(rawValue: 1 << 6)
    public static let rgbLED = WireCapabilities(rawValue: 1 << 7)
    public static let playerLEDs = WireCapabilities(rawValue: 1 << 8)
    public static let adaptiveTriggers = WireCapabilities(rawValue: 1 << 9)
    /// The client plays the host pad's speaker pair on this pad: the host sends `SpeakerFrame`s.
    public static let speaker = WireCapabilities(rawValue: 1 << 10)
    /// The client may record this pad's microphone for the host (`MicrophoneRequest`).
    public static let microphone = WireCapabilities(rawValue: 1 << 11)

    /// What the physical pad can do, as `host status` lists it (unknown bits are not named).
    public var names: [String] {
        let table: [(WireCapabilities, String)] = [
            (.analogTriggers, "analog triggers"), (.rumble, "rumble"), (.triggerRumble, "trigger rumble"), (.touchpad, "touchpad"),
            (.accelerometer, "accelerometer"), (.gyro, "gyro"), (.battery, "battery"), (.rgbLED, "lightbar"),
            (.playerLEDs, "player LEDs"), (.adaptiveTriggers, "adaptive triggers"), (.speaker, "speaker"), (.microphone, "microphone"),
        ]
        return table.filter { contains($0.0) }.map(\.1)
    }
}

/// One feature report, byte for byte as the physical pad answers it, in fixed storage: arrivals
/// ride every keep-alive, and decoding one must not allocate.
public struct FeatureReportBytes: Hashable, Sendable {
    public static let capacity = 64
    public private(set) var count = 0
    private var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

    public init() {}
    /// Nil when `bytes` is longer than `capacity`.
    public init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count <= Self.capacity else { return nil }
        count = bytes.count
        withUnsafeMutableBytes(of: &storage) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
    }
    init(_ raw: UnsafeRawBufferPointer) {
        count = min(raw.count, Self.capacity)
        withUnsafeMutableBytes(of: &storage) { for i in 0..<count { $0[i] = raw[i] } }
    }

    public var isEmpty: Bool { count == 0 }
    public subscript(i: Int) -> UInt8 {
        precondition(i < count)
        return withUnsafeBytes(of: storage) { $0[i] }
    }
    /// The report (allocates: for making a pad, not for the per-report path).
    public var bytes: [UInt8] { withUnsafeBytes(of: storage) { Array($0.prefix(count)) } }
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: storage) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
    }
    public static func == (a: Self, b: Self) -> Bool {
        a.count == b.count && a.withBytes { x in b.withBytes { y in x.elementsEqual(y) } }
    }
    public func hash(into hasher: inout Hasher) { withBytes { hasher.combine(bytes: $0) } }
}

/// What the host's virtual pad needs to answer drivers and games as the physical pad does: its
/// IMU calibration (so the host computes the same physical units from the same raw counts) and
/// its firmware information. Empty fields: the host uses its own defaults.
public struct PadIdentity: Equatable, Sendable {
    /// Feature report 0x05 of a DualSense (41 bytes), 0x02 of a USB DualShock 4 (37 bytes) or
    /// 0x05 of a Bluetooth one (41 bytes, with its CRC).
    public var calibration = FeatureReportBytes()
    /// Feature report 0x20 of a DualSense (64 bytes), 0xa3 of a DualShock 4 (49 bytes).
    public var firmware = FeatureReportBytes()
    /// The physical pad's own identity: its address or serial as its driver gives it (the
    /// kernel's `uniq`), what tells two units of one model apart when their reports are equal.
    public var unit = FeatureReportBytes()
    /// Host side only, never on the wire: the client's paired identity, stamped by the host's
    /// session (`ClientPads`), so pads of two clients never share a host address.
    public var client = FeatureReportBytes()
    public init(calibration: FeatureReportBytes = .init(), firmware: FeatureReportBytes = .init(), unit: FeatureReportBytes = .init()) {
        self.calibration = calibration; self.firmware = firmware; self.unit = unit
    }
}

public struct PadArrival: Equatable, Sendable {
    public var slot: PadSlot
    public var type: PadKind
    public var vendorID: UInt16
    public var productID: UInt16
    public var capabilities: WireCapabilities
    /// At most 64 bytes of UTF-8 on the wire.
    public var name: String
    /// Trailing fields: a sender before them omits them, a receiver before them ignores them.
    public var identity: PadIdentity
    public init(slot: PadSlot, type: PadKind, vendorID: UInt16, productID: UInt16, capabilities: WireCapabilities, name: String,
                identity: PadIdentity = .init()) {
        self.slot = slot; self.type = type; self.vendorID = vendorID; self.productID = productID
        self.capabilities = capabilities; self.name = name; self.identity = identity
    }
}

/// The whole button/stick/trigger state: idempotent, so any one that arrives is enough.
/// Sticks are signed 16-bit with 0 at rest and +y down (evdev's convention); triggers 0...255.
public struct PadStateSnapshot: Equatable, Sendable {
    public var slot: PadSlot
    public var sequence: WireSequence
    /// `GamepadButtons` bits (HIDCodecs): south, east, ..., paddles.
    public var buttons: UInt32
    /// `DPad` raw value: 0 = up, clockwise, 8 = none.
    public var dpad: UInt8
    public var leftX: Int16, leftY: Int16, rightX: Int16, rightY: Int16
    public var l2: UInt8, r2: UInt8
    /// Trailing fields: the triggers at full resolution (0...65535) for pads with more than 8
    /// bits of trigger (an Xbox's 10), so the host's pad reports the physical pad's raw value.
    /// nil: the sender has only `l2`/`r2` (an older sender, or a pad with 8-bit triggers).
    public var l2Fine: UInt16?, r2Fine: UInt16?
    public init(slot: PadSlot, sequence: WireSequence = WireSequence(0), buttons: UInt32 = 0, dpad: UInt8 = 8,
                leftX: Int16 = 0, leftY: Int16 = 0, rightX: Int16 = 0, rightY: Int16 = 0, l2: UInt8 = 0, r2: UInt8 = 0,
                l2Fine: UInt16? = nil, r2Fine: UInt16? = nil) {
        self.slot = slot; self.sequence = sequence; self.buttons = buttons; self.dpad = dpad
        self.leftX = leftX; self.leftY = leftY; self.rightX = rightX; self.rightY = rightY; self.l2 = l2; self.r2 = r2
        self.l2Fine = l2Fine; self.r2Fine = r2Fine
    }
    /// A trigger at full resolution: the fine value when sent, else the 8-bit one spread over 16 bits.
    public var l2Wide: UInt16 { l2Fine ?? UInt16(l2) * 257 }
    public var r2Wide: UInt16 { r2Fine ?? UInt16(r2) * 257 }
    /// Everything but the sequence: what "changed" means.
    public func sameControls(as other: PadStateSnapshot) -> Bool {
        buttons == other.buttons && dpad == other.dpad && leftX == other.leftX && leftY == other.leftY
            && rightX == other.rightX && rightY == other.rightY && l2 == other.l2 && r2 == other.r2
            && l2Fine == other.l2Fine && r2Fine == other.r2Fine
    }
    public static func neutral(_ slot: PadSlot) -> PadStateSnapshot { PadStateSnapshot(slot: slot) }
}

/// Touch contacts in the DualSense's own 1920×1080 touchpad space.
public struct WireTouchContact: Equatable, Sendable {
    public var id: UInt8
    public var active: Bool
    public var x: UInt16
    public var y: UInt16
    /// 0...65535 of a full press; nil where the pad has no pressure sensor.
    public var pressure: UInt16?
    public init(id: UInt8 = 0, active: Bool = false, x: UInt16 = 0, y: UInt16 = 0, pressure: UInt16? = nil) {
        self.id = id; self.active = active; self.x = x; self.y = y; self.pressure = pressure
    }
}

public struct TouchSnapshot: Equatable, Sendable {
    public var slot: PadSlot
    public var sequence: WireSequence
    public var first: WireTouchContact
    public var second: WireTouchContact
    public init(slot: PadSlot, sequence: WireSequence = WireSequence(0), first: WireTouchContact = .init(), second: WireTouchContact = .init()) {
        self.slot = slot; self.sequence = sequence; self.first = first; self.second = second
    }
}

/// One IMU sample in physical units: gyro in degrees per second, accelerometer in g (docs/wire.md
/// says why). Calibrated on the client, which knows the pad.
public struct WireMotionSample: Equatable, Sendable {
    public var timestampMicros: UInt32
    public var gyroX: Float, gyroY: Float, gyroZ: Float
    public var accelX: Float, accelY: Float, accelZ: Float
    public init(timestampMicros: UInt32 = 0, gyroX: Float = 0, gyroY: Float = 0, gyroZ: Float = 0,
                accelX: Float = 0, accelY: Float = 0, accelZ: Float = 0) {
        self.timestampMicros = timestampMicros
        self.gyroX = gyroX; self.gyroY = gyroY; self.gyroZ = gyroZ
        self.accelX = accelX; self.accelY = accelY; self.accelZ = accelZ
    }
}

/// Up to four samples batched in one message.
public struct MotionBatch: Equatable, Sendable {
    public static let capacity = 4
    public var slot: PadSlot
    public var count: Int = 0
    public var samples: (WireMotionSample, WireMotionSample, WireMotionSample, WireMotionSample) = (.init(), .init(), .init(), .init())
    public init(slot: PadSlot) { self.slot = slot }

    public subscript(i: Int) -> WireMotionSample {
        get { precondition(i < count); return withUnsafeBytes(of: samples) { $0.load(fromByteOffset: i * MemoryLayout<WireMotionSample>.stride, as: WireMotionSample.self) } }
    }
    public mutating func append(_ sample: WireMotionSample) -> Bool {
        guard count < Self.capacity else { return false }
        withUnsafeMutableBytes(of: &samples) { $0.storeBytes(of: sample, toByteOffset: count * MemoryLayout<WireMotionSample>.stride, as: WireMotionSample.self) }
        count += 1
        return true
    }
    public static func == (a: MotionBatch, b: MotionBatch) -> Bool {
        a.slot == b.slot && a.count == b.count && (0..<a.count).allSatisfy { a[$0] == b[$0] }
    }
}

public struct BatteryReport: Equatable, Sendable {
    public var slot: PadSlot
    public var percent: UInt8
    /// `ChargingState` raw value (HIDCodecs).
    public var state: UInt8
    public init(slot: PadSlot, percent: UInt8, state: UInt8) { self.slot = slot; self.percent = percent; self.state = state }
}

/// Host → client: keep the motors at these levels until `ttlMillis` after arrival, unless renewed.
/// Levels are 0...65535 (evdev FF magnitudes); a stop is an explicit zero lease.
public struct RumbleLease: Equatable, Sendable {
    public var slot: PadSlot
    public var sequence: WireSequence
    public var low: UInt16
    public var high: UInt16
    public var leftTrigger: UInt16
    public var rightTrigger: UInt16
    public var ttlMillis: UInt16
    public init(slot: PadSlot, sequence: WireSequence, low: UInt16, high: UInt16, leftTrigger: UInt16 = 0, rightTrigger: UInt16 = 0, ttlMillis: UInt16) {
        self.slot = slot; self.sequence = sequence; self.low = low; self.high = high
        self.leftTrigger = leftTrigger; self.rightTrigger = rightTrigger; self.ttlMillis = ttlMillis
    }
    public var isStop: Bool { low == 0 && high == 0 && leftTrigger == 0 && rightTrigger == 0 }

    /// A time to live from `now` to `end`, rounded up to the millisecond and at least 1 (0 would
    /// mean stop): a lease bounded so never ends before what it carries does.
    public static func millis(from now: MonotonicInstant, until end: MonotonicInstant) -> UInt16 {
        let nanoseconds = max(Int64(0), end.nanoseconds &- now.nanoseconds)
        return UInt16(clamping: max(1, (nanoseconds + 999_999) / 1_000_000))
    }

    /// 8-bit motor levels on the wire's 16-bit scale: ×257 puts 0xFF on 0xFFFF exactly.
    /// A lease from a virtual pad, numbered by the host's session before it is sent.
    public static func unnumbered(slot: PadSlot, levels: MotorLevels, ttlMillis: UInt16) -> RumbleLease {
        RumbleLease(slot: slot, sequence: .unnumbered, levels: levels, ttlMillis: ttlMillis)
    }

    public init(slot: PadSlot, sequence: WireSequence, levels: MotorLevels, ttlMillis: UInt16) {
        self.init(slot: slot, sequence: sequence, low: UInt16(levels.low) * 257, high: UInt16(levels.high) * 257,
                  leftTrigger: UInt16(levels.leftTrigger) * 257, rightTrigger: UInt16(levels.rightTrigger) * 257, ttlMillis: ttlMillis)
    }

    /// The 16-bit magnitudes as the motors' 8 bits (the high byte: the inverse of ×257).
    public var levels: MotorLevels {
        MotorLevels(low: UInt8(low >> 8), high: UInt8(high >> 8), leftTrigger: UInt8(leftTrigger >> 8), rightTrigger: UInt8(rightTrigger >> 8))
    }
}

/// An adaptive-trigger block: mode byte + 10 parameters, as the DualSense takes it.
public struct TriggerBlock: Equatable, Sendable {
    public var bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)
    public init(_ array: [UInt8]) {
        var b = [UInt8](repeating: 0, count: 11)
        for (i, v) in array.prefix(11).enumerated() { b[i] = v }
        bytes = (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10])
    }
    public var array: [UInt8] { withUnsafeBytes(of: bytes) { Array($0) } }
    public var mode: UInt8 { bytes.0 }
    func write(into w: inout WireWriter) throws(WireError) {
        var copy = bytes
        for i in 0..<11 { try w.u8(withUnsafeBytes(of: &copy) { $0[i] }) }
    }
    public static func == (a: TriggerBlock, b: TriggerBlock) -> Bool { a.array == b.array }
}

/// Host → client: HID-level feedback. Only the fields named in `fields` apply.
public struct HIDOutputMessage: Equatable, Sendable {
    public struct Fields: OptionSet, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let lightbar = Fields(rawValue: 1 << 0)
        public static let playerLEDs = Fields(rawValue: 1 << 1)
        public static let micLED = Fields(rawValue: 1 << 2)
        public static let leftTrigger = Fields(rawValue: 1 << 3)
        public static let rightTrigger = Fields(rawValue: 1 << 4)
    }
    public var slot: PadSlot
    public var sequence: WireSequence
    public var fields: Fields = []
    public var red: UInt8 = 0, green: UInt8 = 0, blue: UInt8 = 0
    public var playerLEDMask: UInt8 = 0
    public var micLED: UInt8 = 0
    public var leftTrigger = TriggerBlock([])
    public var rightTrigger = TriggerBlock([])
    public init(slot: PadSlot, sequence: WireSequence) { self.slot = slot; self.sequence = sequence }

    /// The newer message's fields over this one's: the pad's whole output state so far, which the
    /// host sends again after each change (ClientPads) because feedback datagrams can be lost.
    public mutating func merge(_ newer: HIDOutputMessage) {
        sequence = newer.sequence
        fields.formUnion(newer.fields)
        if newer.fields.contains(.lightbar) { red = newer.red; green = newer.green; blue = newer.blue }
        if newer.fields.contains(.playerLEDs) { playerLEDMask = newer.playerLEDMask }
        if newer.fields.contains(.micLED) { micLED = newer.micLED }
        if newer.fields.contains(.leftTrigger) { leftTrigger = newer.leftTrigger }
        if newer.fields.contains(.rightTrigger) { rightTrigger = newer.rightTrigger }
    }
}

public struct MotionRateRequest: Equatable, Sendable {
    public var slot: PadSlot
    /// 0 turns motion off.
    public var hertz: UInt16
    public init(slot: PadSlot, hertz: UInt16) { self.slot = slot; self.hertz = hertz }
}

/// Round-trip probe: the client sends `ping`, the host echoes it as `pong` (docs/link-test.md).
/// Trailing fields (a peer before them omits and ignores them): a ping carries what the client
/// measured lately (`figures`, for `host status`), a pong what the host counted of this session's
/// pings (`tally`), and either may be padded to an input datagram's size (`padding` zero bytes).
public struct Probe: Equatable, Sendable {
    public var id: UInt32
    public var sentMicros: UInt64
    public var figures = LinkFigures()
    public var tally = PingTally()
    public var padding: UInt16 = 0
    public init(id: UInt32, sentMicros: UInt64, figures: LinkFigures = LinkFigures(), tally: PingTally = PingTally(), padding: UInt16 = 0) {
        self.id = id; self.sentMicros = sentMicros; self.figures = figures; self.tally = tally; self.padding = padding
    }
    /// The host's answer: the same id, time and size, with its counts.
    public func echo(_ tally: PingTally) -> Probe { Probe(id: id, sentMicros: sentMicros, tally: tally, padding: padding) }
}

/// What the client measured of the link lately (zero: not measured yet).
public struct LinkFigures: Equatable, Sendable {
    public var roundTripMicros: UInt32 = 0
    public var jitterMicros: UInt32 = 0
    /// Parts per thousand, 0...1000.
    public var lossToHostPermille: UInt16 = 0
    public var lossToClientPermille: UInt16 = 0
    public init(roundTripMicros: UInt32 = 0, jitterMicros: UInt32 = 0, lossToHostPermille: UInt16 = 0, lossToClientPermille: UInt16 = 0) {
        self.roundTripMicros = roundTripMicros; self.jitterMicros = jitterMicros
        self.lossToHostPermille = lossToHostPermille; self.lossToClientPermille = lossToClientPermille
    }
    public static let wireSize = 12
}

/// What the host counted of a session's pings when it answered one: `received` is also this
/// pong's ordinal among the pongs it sent, so the client can tell loss each way.
public struct PingTally: Equatable, Sendable {
    public var received: UInt32 = 0
    public var highestID: UInt32 = 0
    /// Pings that arrived after a later one.
    public var reordered: UInt32 = 0
    /// Datagrams of this session the host dropped as copies of ones it had (the replay window).
    public var duplicates: UInt32 = 0
    public init(received: UInt32 = 0, highestID: UInt32 = 0, reordered: UInt32 = 0, duplicates: UInt32 = 0) {
        self.received = received; self.highestID = highestID; self.reordered = reordered; self.duplicates = duplicates
    }
    public static let wireSize = 16

    /// Counts one ping (the host's side).
    public mutating func count(_ id: UInt32) {
        received &+= 1
        if received == 1 || id &- highestID < 0x8000_0000 { highestID = id } else { reordered &+= 1 }
    }
}

public enum WireMessage: Equatable, Sendable {
    // client → host
    case arrival(PadArrival)
    case removal(PadSlot)
    case state(PadStateSnapshot)
    case touch(TouchSnapshot)
    case motion(MotionBatch)
    case battery(BatteryReport)
    case ping(Probe)
    case microphone(MicrophoneFrame)
    // host → client
    case rumble(RumbleLease)
    case hidOutput(HIDOutputMessage)
    case motionRate(MotionRateRequest)
    case pong(Probe)
    case haptics(HapticsBlock)
    case speaker(SpeakerFrame)
    case microphoneRequest(MicrophoneRequest)
    case trackpadPulse(TrackpadPulse)
}

/// Message type numbers. Never reuse one; add new ones at the end.
public enum WireMessageType: UInt8, Sendable {
    case arrival = 0x01, removal = 0x02, state = 0x03, touch = 0x04, motion = 0x05, battery = 0x06, ping = 0x07, microphone = 0x08
    case rumble = 0x20, hidOutput = 0x21, motionRate = 0x22, pong = 0x23, haptics = 0x24, speaker = 0x25, microphoneRequest = 0x26,
         trackpadPulse = 0x27
}
