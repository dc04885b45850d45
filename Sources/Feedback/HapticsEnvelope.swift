import HIDCodecs
import MonotonicTime

/// The host's haptics stream on a pad without voice coils (a DualShock 4, an Xbox pad, any pad
/// with rumble): each 5 ms block's loudness per side becomes a motor level, the left coil's on
/// the strong (left, low) motor and the right coil's on the weak (right, high) one, as the pads
/// place them. Levels go to `RumbleRenderer` as its underlay: the game's own rumble wins while it
/// plays (docs/feedback.md), and the underlay's lease silences the motors when blocks stop.
///
/// - a block's level is its peak, which then falls by an eighth each block (a 40 ms release), so
///   a click of a few frames still turns a motor that needs tens of ms to spin;
/// - below `gate` a side is silent (the coils' quiet textures would keep a motor whining);
/// - a silent block silences at once: the host sends one when the game's sound stops;
/// - blocks come in any order: an older one than the newest is dropped (a motor level is state,
///   the newest wins), unless the sender was quiet long enough to have started counting again.
///
/// Pure: no clock, no allocation; callers pass `now`.
public struct HapticsEnvelope: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// How long a level holds without a newer block: a dead link's motors stop within it.
        public var lease: Duration = .milliseconds(50)
        /// Peaks below this (of 127) are silence.
        public var gate: Int = 8
        /// After this long without a block, any number starts a new stream.
        public var restartAfter: Duration = .seconds(1)
        public init() {}
    }

    public struct Counters: Sendable, Equatable {
        public var received = 0, stale = 0, short = 0
        public init() {}
    }

    public let configuration: Configuration
    public private(set) var counters = Counters()
    /// The level each side holds now (0-255).
    public private(set) var levels = MotorLevels.silent
    /// Each side's frequency in Hz (0: none found yet), for actuators that take one (a Switch
    /// Pro's HD rumble).
    public var frequencies: (left: Double, right: Double) { (left.frequency, right.frequency) }
    private var left = FrequencyTracker(), right = FrequencyTracker()
    private var newest: UInt16?
    private var lastArrival: MonotonicInstant?

    public init(configuration: Configuration = Configuration()) { self.configuration = configuration }

    /// A block (`2 × HapticsPlayout.blockFrames` samples, left and right interleaved): the
    /// motors' levels it asks for and until when, or nil when it is dropped.
    public mutating func receive(sequence: UInt16, samples: UnsafeRawBufferPointer, at now: MonotonicInstant)
        -> (levels: MotorLevels, until: MonotonicInstant)? {
        guard samples.count >= 2 * HapticsPlayout.blockFrames else { counters.short += 1; return nil }
        counters.received += 1
        let quiet = lastArrival.map { now - $0 > configuration.restartAfter } ?? true
        if let newest, !quiet, Serial16.distance(sequence, from: newest) <= 0 { counters.stale += 1; return nil }
        var decay = 1
        if let newest, !quiet { decay = Serial16.distance(sequence, from: newest) } else { levels = .silent }
        newest = sequence
        lastArrival = now
        if decay != 1 { left.reset(); right.reset() }   // a gap, or a new stream: no crossing spans it
        var peakLeft = 0, peakRight = 0
        for frame in 0..<HapticsPlayout.blockFrames {
            let l = Int(Int8(bitPattern: samples[2 * frame])), r = Int(Int8(bitPattern: samples[2 * frame + 1]))
            peakLeft = max(peakLeft, abs(l))
            peakRight = max(peakRight, abs(r))
            left.add(l)
            right.add(r)
        }
        // A silent block is the sender saying the sound stopped: no release after it.
        levels = peakLeft == 0 && peakRight == 0 ? .silent
            : MotorLevels(low: level(peakLeft, was: levels.low, blocks: decay), high: level(peakRight, was: levels.high, blocks: decay))
        return (levels, now + configuration.lease)
    }

    /// 0-127 of the coils to 0-255 of a motor, after `blocks` blocks of release from `was`.
    private func level(_ peak: Int, was: UInt8, blocks: Int) -> UInt8 {
        var released = Int(was)
        for _ in 0..<min(blocks, 32) where released > 0 { released -= (released + 7) / 8 }
        let attack = peak >= configuration.gate ? peak * 255 / 127 : 0
        let level = min(255, max(attack, released))
        return level >= configuration.gate * 255 / 127 ? UInt8(level) : 0
    }
}

/// A side's frequency from its zero crossings: each crossing placed between the two frames it
/// lies between, half periods averaged (a quarter of each new one). A swing must pass ±`hysteresis`
/// to count, so noise around zero is not a frequency; a half period over 60 frames (25 Hz) is no
/// tone, and the tracker starts again.
struct FrequencyTracker: Sendable {
    static let hysteresis = 4
    static let longestHalfPeriod = 60.0
    private(set) var frequency = 0.0
    private var frame = 0
    private var sign = 0
    private var previous = 0
    private var lastCrossing: Double?
    private var halfPeriod: Double?

    mutating func reset() { sign = 0; lastCrossing = nil }

    mutating func add(_ sample: Int) {
        defer { previous = sample; frame += 1 }
        let now = sample >= Self.hysteresis ? 1 : sample <= -Self.hysteresis ? -1 : 0
        guard now != 0, now != sign else { return }
        let was = sign
        sign = now
        guard was != 0 else { return }
        // Between the last frame and this one, where the line between them crosses zero.
        let crossing = Double(frame - 1) + Double(previous) / Double(previous - sample)
        defer { lastCrossing = crossing }
        guard let lastCrossing else { return }
        let half = crossing - lastCrossing
        guard half <= Self.longestHalfPeriod else { halfPeriod = nil; frequency = 0; return }
        let average = halfPeriod.map { 0.75 * $0 + 0.25 * half } ?? half
        halfPeriod = average
        frequency = Double(HapticsPlayout.sampleRate) / (2 * average)
    }
}
