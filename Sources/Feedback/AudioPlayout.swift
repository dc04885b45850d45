import HIDCodecs
import MonotonicTime

/// The client's side of the speaker stream, after decoding: numbered 5 ms frames of 48 kHz
/// stereo (240 frames, s16, interleaved) in, whatever order the network gives them, and a steady
/// signal out at the output's pace. The haptics playout's rules, simpler because Opus conceals a
/// loss itself (the caller decodes the gap's frames as lost before the frame after it):
///
/// - every frame has its place on one timeline, fixed when a stream starts: frame `n` plays at
///   `start + allowance + lead + (n - first) × 5 ms`, the allowance measured as the haptics'
///   (`JitterEstimate`);
/// - **a late frame is never played late**: a frame older than the newest is dropped (the decoder
///   concealed it when the newer one came); the newest frame whose place has passed is the sender
///   falling behind, and the timeline starts again from it (a slip, counted);
/// - a gap with nothing for it plays silence;
/// - **a dead link leaves the speaker silent**: `deadLink` after the newest frame's place the
///   stream ends;
/// - a pull that comes late skips to where the timeline is now; a stream's first pull that lands
///   past its first frame (an output playing further ahead than its stated lead) moves the
///   timeline so the stream plays from its first frame.
///
/// It never reads a clock and never allocates after `init`.
public struct AudioPlayout: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Before the link's jitter is measured; then measured, within the least and the most.
        public var allowance: Duration = .milliseconds(20)
        public var minimumAllowance: Duration = .milliseconds(2)
        public var maximumAllowance: Duration = .milliseconds(100)
        public var deadLink: Duration = .milliseconds(100)
        /// What the output holds ahead of the moment it pulls (the card's queue).
        public var lead: Duration = .zero
        /// How far behind the timeline a pull may come before it skips ahead: one period for an
        /// output that pulls steadily, a transfer's worth for one that pulls in bursts.
        public var lateness: Duration = .milliseconds(5)
        public init(allowance: Duration = .milliseconds(20), deadLink: Duration = .milliseconds(100), lead: Duration = .zero,
                    lateness: Duration = .milliseconds(5)) {
            self.allowance = allowance; self.deadLink = deadLink; self.lead = lead; self.lateness = lateness
        }
    }

    public struct Counters: Sendable, Equatable {
        public var received = 0, played = 0, late = 0, duplicates = 0, slips = 0, skips = 0, streams = 0
        /// Streams (or slips) whose first pull came past their first frame's place, moved later.
        public var movedStarts = 0
        public init() {}
    }

    public enum Placement: Sendable, Equatable {
        /// Store it (`store`) after decoding `lost` frames before it as lost (at most `maximumConcealed`).
        case accept(lost: Int)
        /// Dropped: its place has passed, or it came before.
        case drop
    }

    /// 5 ms at 48 kHz.
    public static let frameSamples = 240
    public static let sampleRate = 48_000
    /// 160 ms held.
    static let capacity = 32
    /// The most lost frames decoded as concealment before a frame (30 ms, as haptics conceal).
    public static let maximumConcealed = 6

    public let configuration: Configuration
    public private(set) var counters = Counters()
    private var samples: [Int16]
    private var slotNumber: [Int64]
    private var timeline = PlayoutTimeline(rate: sampleRate, blockFrames: frameSamples)
    private var jitter: JitterEstimate
    /// What the current stream started with (measured).
    public private(set) var allowance: Duration

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        allowance = configuration.allowance
        jitter = JitterEstimate(block: Self.duration(frames: Int64(Self.frameSamples)), configuration: .init(
            initial: configuration.allowance, floor: configuration.minimumAllowance, ceiling: configuration.maximumAllowance))
        samples = [Int16](repeating: 0, count: Self.capacity * 2 * Self.frameSamples)
        slotNumber = [Int64](repeating: -1, count: Self.capacity)
    }

    public var isPlaying: Bool { timeline.isPlaying }

    /// The link's jitter from its pings, for streams before one is measured (`JitterEstimate.seed`).
    public mutating func seed(linkJitter: Duration) { jitter.seed(linkJitter: linkJitter) }

    static func frames(_ d: Duration) -> Int64 { SampleClock.frames(d, rate: sampleRate) }
    static func duration(frames: Int64) -> Duration { SampleClock.duration(frames: frames, rate: sampleRate) }

    func frame(at time: MonotonicInstant) -> Int64? { timeline.frame(at: time) }

    /// Where a frame numbered `sequence` goes: `number` is what `store` takes.
    public mutating func place(sequence: UInt16, at now: MonotonicInstant) -> (placement: Placement, number: Int64) {
        counters.received += 1
        let number = timeline.number(of: sequence)
        if timeline.isBeyond(number, ring: Self.capacity, at: now) { timeline.origin = nil }
        if !timeline.isPlaying {
            counters.streams += 1
            jitter.startStream()
            jitter.observe(number, at: now)
            allowance = jitter.allowance(at: now)
            timeline.start(number, playsAt: now + allowance + configuration.lead)
            for i in slotNumber.indices { slotNumber[i] = -1 }
            return (.accept(lost: 0), number)
        }
        jitter.observe(number, at: now)
        guard let newest = timeline.newest else { return (.drop, number) }
        if number <= newest {
            if slotNumber[slot(number)] == number { counters.duplicates += 1 } else { counters.late += 1 }
            return (.drop, number)
        }
        if let position = timeline.position, timeline.firstFrame(of: number + 1) <= position {
            // The newest, and its place has passed: the sender fell behind. Start the timeline again from it.
            counters.slips += 1
            timeline.start(number, playsAt: now + allowance + configuration.lead)
            return (.accept(lost: 0), number)
        }
        timeline.newest = number
        return (.accept(lost: Int(min(number - newest - 1, Int64(Self.maximumConcealed)))), number)
    }

    private func slot(_ number: Int64) -> Int { Int(number & Int64(Self.capacity - 1)) }

    /// A decoded frame (`2 × frameSamples` samples) for `number` (from `place`, or a lost one before it).
    public mutating func store(_ number: Int64, pcm: UnsafeBufferPointer<Int16>) {
        precondition(pcm.count >= 2 * Self.frameSamples)
        let slot = slot(number)
        slotNumber[slot] = number
        let base = slot * 2 * Self.frameSamples
        for i in 0..<2 * Self.frameSamples { samples[base + i] = pcm[i] }
    }

    /// Fills `out` (`2 × count` samples) with what plays from `playsAt` on.
    public mutating func render(into out: UnsafeMutableBufferPointer<Int16>, frames count: Int, playsAt time: MonotonicInstant) -> HapticsPlayout.State {
        precondition(out.count >= 2 * count)
        guard var target = frame(at: time), timeline.newest != nil, var origin = timeline.origin else {
            for i in 0..<2 * count { out[i] = 0 }
            return .idle
        }
        if timeline.position == nil, target > origin.frame {
            // The stream's first pull plays past its first frame's place: the output plays further
            // ahead than its stated lead (else each frame after it would be past its place too,
            // and slip, unheard). It plays from its first frame the allowance from now, but never
            // later than the largest allowance after its frame arrived.
            let back = min(target - origin.frame + Self.frames(allowance), max(0, Self.frames(configuration.maximumAllowance - allowance)))
            if back > 0 {
                counters.movedStarts += 1
                origin.time += Self.duration(frames: back)
                timeline.origin = origin
                target -= back
            }
        }
        var position = timeline.position ?? target
        if position < target - Self.frames(configuration.lateness) {
            counters.skips += 1
            position = target
        }
        for i in 0..<count {
            let number = SampleClock.block(of: position, size: Self.frameSamples)
            let offset = Int(position - number * Int64(Self.frameSamples))
            let slot = slot(number)
            if slotNumber[slot] == number {
                out[2 * i] = samples[slot * 2 * Self.frameSamples + 2 * offset]
                out[2 * i + 1] = samples[slot * 2 * Self.frameSamples + 2 * offset + 1]
                if offset == Self.frameSamples - 1 { slotNumber[slot] = -1; counters.played += 1 }
            } else {
                out[2 * i] = 0
                out[2 * i + 1] = 0
            }
            position += 1
        }
        timeline.position = position
        return timeline.endIfDead(after: configuration.deadLink) ? .idle : .playing
    }
}
