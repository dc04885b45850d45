import HIDCodecs
import MonotonicTime

/// The client's side of the haptics stream: numbered 5 ms blocks (15 stereo frames of signed
/// 8-bit at 3 kHz) in, whatever order and timing the network gives them, and a steady signal out
/// at the pace the pad's output takes it. The rules are rumble's, for audio (docs/haptics.md):
///
/// - every block has its place on one timeline, fixed when a stream starts: block `n` plays at
///   `start + allowance + lead + (n - first) × 5 ms`, so jitter up to the allowance costs nothing;
/// - **the allowance is measured**: a stream starts with the spread of the last seconds' arrivals
///   against their own pace plus a margin (`JitterEstimate`), between `minimumAllowance` and
///   `maximumAllowance`; the configured `allowance` until anything is measured. Sound after the
///   host's silence (everything received played) is placed afresh the same way: a burst's onset;
/// - **a late block is never played late**: a straggler whose place has passed (a newer block
///   came first, and sound after it played) is dropped and counted; the newest block that late,
///   even in part, is the sender falling behind, and the output goes back to its start (it had
///   played concealment there), the
///   allowance growing by the lateness up to `maximumAllowance`, past which the timeline follows
///   the sender's slipped clock with the base allowance again. No frame plays later than the
///   largest delay after its block arrived;
/// - **a lost block is concealed, then silenced**: the last signal's period is repeated, fading
///   to nothing over `concealment`, and silence follows;
/// - **a dead link leaves the coils silent**: `deadLink` after the newest block's place the stream
///   ends (`render` says `.idle`) and the next block starts a new one;
/// - a pull that comes late (the output's thread was held up) plays the sound it holds late
///   rather than skip it (a click skipped is lost), and catches up at the next silence; what
///   would play later than the largest allowance after its place is skipped.
///
/// It never reads a clock and never allocates after `init`: callers pass `now`, so tests drive it
/// with simulated time and the benchmark measures the code that ships.
public struct HapticsPlayout: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Jitter absorbed from the start of a stream, before the link's own is measured.
        public var allowance: Duration = .milliseconds(20)
        /// The least a stream starts with, however steady the link measured (a wake-up's worth).
        public var minimumAllowance: Duration = .milliseconds(2)
        /// The most a stream starts with, and the most the allowance grows to after late blocks.
        public var maximumAllowance: Duration = .milliseconds(100)
        /// How long a gap is filled with the repeated, fading signal before silence.
        public var concealment: Duration = .milliseconds(30)
        /// How long after the newest block's place the stream ends.
        public var deadLink: Duration = .milliseconds(100)
        /// How far ahead of the moment it pulls the output plays what it pulls (a Bluetooth
        /// report's length, an ALSA queue): part of the latency, so part of the timeline.
        public var lead: Duration = .zero
        public init() {}
        public init(allowance: Duration = .milliseconds(20), minimumAllowance: Duration = .milliseconds(2),
                    maximumAllowance: Duration = .milliseconds(100),
                    concealment: Duration = .milliseconds(30), deadLink: Duration = .milliseconds(100), lead: Duration) {
            self.allowance = allowance; self.minimumAllowance = minimumAllowance; self.maximumAllowance = maximumAllowance
            self.concealment = concealment; self.deadLink = deadLink; self.lead = lead
        }
    }

    public enum State: Sendable, Equatable {
        /// Signal, concealment or the silence inside a stream: keep pulling on the output's cadence.
        case playing
        /// No stream: the output may stop until the next block (`receive` returns true then).
        case idle
    }

    /// What happened to the blocks, for `host status`-like lines, tests and the benchmark.
    public struct Counters: Sendable, Equatable {
        public var received = 0, played = 0, late = 0, duplicates = 0, stale = 0
        /// Blocks whose place passed without them (lost or never sent), and frames concealed.
        public var missing = 0, concealedFrames = 0
        /// Pulls that came late and skipped ahead, and the frames skipped.
        public var skips = 0, skippedFrames = 0
        /// Blocks that came after their place and still played: the allowance grew by their
        /// lateness (`regrown`), or past its largest the timeline followed the sender (`slips`).
        public var regrown = 0, slips = 0
        /// Newest blocks whose place lay past the largest delay after their arrival (a backlog
        /// sent at once): the timeline moved earlier.
        public var trimmed = 0
        /// Streams started (a block after idle), and bursts placed afresh within one (sound after
        /// silence, at the allowance measured then).
        public var streams = 0, onsets = 0
        /// Blocks taken from the copy a later block carried (the block itself lost).
        public var recovered = 0
        /// The latest a block arrived, this stream, against the first block's pace (5 ms a
        /// block from its arrival): the jitter the allowance has to cover.
        public var worstLateness: Duration = .zero
        public init() {}
    }

    public static let blockFrames = 15
    public static let sampleRate = DualSenseHapticsReport.sampleRate
    /// Blocks held: 320 ms, three times the largest allowance.
    static let capacity = 64
    /// A pull more than this far from the timeline is moved onto it.
    static let tolerance = 2 * blockFrames
    /// The least of what precedes a burst a late output's catch-up keeps before it: 10 ms, which
    /// the hand tells apart as two bursts.
    static let burstSeparation: Duration = .milliseconds(10)

    public let configuration: Configuration
    public private(set) var counters = Counters()
    /// The allowance now (grows with late blocks; measured again for each stream).
    public private(set) var allowance: Duration
    /// What this stream started with, measured (`jitter`): the slack a late block's regrowth restores.
    public private(set) var baseAllowance: Duration
    private var jitter: JitterEstimate

    /// Block storage, `capacity` slots of `2 × blockFrames` samples; `slotBlock` says which block
    /// each holds (-1: none).
    private var samples: [Int8]
    private var slotBlock: [Int64]
    private var timeline = PlayoutTimeline(rate: sampleRate, blockFrames: blockFrames)
    /// The stream's first block and when it arrived.
    private var firstArrival: (number: Int64, at: MonotonicInstant)?
    /// The last frames of real signal (`history`, a ring of `historyFrames`), where they end, how
    /// many of them belong to the burst playing now (`remembered`: concealment never repeats a
    /// burst before it, whose sound would come back inside this one), and
    /// the period concealment repeats (found once per gap).
    private var history: [Int8]
    private var historyEnd = 0
    private var remembered = 0
    /// Whether this stream has played any real signal (concealment needs some).
    private var playedReal = false
    /// The last frame of real signal played that sounded.
    private var lastSoundFrame: Int64?
    /// Whether the newest block received is silence (the host's end of a burst), played or not.
    private var newestSilent = false
    private var concealPeriod = 0
    /// Frames of concealment played since the last real frame: its fade counts what the output
    /// played, not timeline frames (a late pull skips a gap, a late block moves the timeline
    /// back), so the gap before a late block is concealed whole, never silence inside a burst.
    private var concealed: Int64 = 0
    /// 21 ms: periods up to 32 frames (94 Hz) are found.
    static let historyFrames = 64

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        allowance = configuration.allowance
        baseAllowance = configuration.allowance
        jitter = JitterEstimate(block: Self.blockDuration(1), configuration: .init(
            initial: configuration.allowance, floor: configuration.minimumAllowance, ceiling: configuration.maximumAllowance))
        samples = [Int8](repeating: 0, count: Self.capacity * 2 * Self.blockFrames)
        slotBlock = [Int64](repeating: -1, count: Self.capacity)
        history = [Int8](repeating: 0, count: 2 * Self.historyFrames)
    }

    public var isPlaying: Bool { timeline.isPlaying }

    /// The link's jitter from its pings, for streams before one is measured (`JitterEstimate.seed`).
    public mutating func seed(linkJitter: Duration) { jitter.seed(linkJitter: linkJitter) }

    /// The latency a block sees from arrival to the coils when it arrives on time with no jitter.
    public var delay: Duration { allowance + configuration.lead }

    static func blockDuration(_ blocks: Int64) -> Duration { duration(frames: blocks * Int64(blockFrames)) }
    static func frames(_ d: Duration) -> Int64 { SampleClock.frames(d, rate: sampleRate) }
    static func duration(frames: Int64) -> Duration { SampleClock.duration(frames: frames, rate: sampleRate) }

    /// Where the timeline is at `time`.
    func frame(at time: MonotonicInstant) -> Int64? { timeline.frame(at: time) }

    /// A block from the host: `sequence` its 16-bit number, `blockSamples` its `2 × blockFrames`
    /// samples (left, right, …). Returns true when it starts a stream (the output should wake).
    @discardableResult
    public mutating func receive(sequence: UInt16, samples blockSamples: UnsafeRawBufferPointer, at now: MonotonicInstant) -> Bool {
        receive(sequence: sequence, samples: blockSamples, at: now, copy: false)
    }

    /// The copy of a block that a later block carried (`HapticsBlock.withPreviousSamples`),
    /// handed over before that block: taken where the block itself was lost and its place has not
    /// passed, or where silence plays (a click whose only block was lost, recovered from the
    /// host's silent block after it), as a burst placed afresh. Where its place passed while
    /// concealment played, concealment covered it and it is dropped: it never moves the timeline
    /// back. Its arrival is not the link's jitter (it rode a later datagram), so the allowance
    /// does not measure it.
    @discardableResult
    public mutating func receiveCopy(sequence: UInt16, samples blockSamples: UnsafeRawBufferPointer, at now: MonotonicInstant) -> Bool {
        guard blockSamples.count >= 2 * Self.blockFrames else { return false }
        let number = timeline.number(of: sequence)
        var startsBurst = false
        if timeline.isPlaying {
            if slotBlock[Self.slot(of: number)] == number { return false }
            let start = timeline.firstFrame(of: number)
            if let position = timeline.position, start < position {
                // Its place passed: taken only as a burst after silence (after the host's silent
                // block, or past the concealment of the last sound), never inside one.
                let silence = newestSilent || lastSoundFrame.map { start >= $0 + Self.frames(configuration.concealment) } ?? true
                guard silence, number > timeline.newest ?? .max else { return false }
                startsBurst = true
            }
        }
        counters.recovered += 1
        return receive(sequence: sequence, samples: blockSamples, at: now, copy: true, startsBurst: startsBurst)
    }

    private mutating func receive(sequence: UInt16, samples blockSamples: UnsafeRawBufferPointer, at now: MonotonicInstant,
                                  copy: Bool, startsBurst: Bool = false) -> Bool {
        guard blockSamples.count >= 2 * Self.blockFrames else { return false }
        if !copy { counters.received += 1 }
        let number = timeline.number(of: sequence)
        let start = timeline.firstFrame(of: number)
        if !copy, let first = firstArrival {
            let lateness = now - (first.at + Self.blockDuration(number - first.number))
            if lateness > counters.worstLateness { counters.worstLateness = lateness }
        }
        if timeline.isBeyond(number, ring: Self.capacity, at: now) { timeline.origin = nil }
        var starts = false
        if !timeline.isPlaying {
            starts = true
            counters.streams += 1
            placeAfresh(number, at: now)
            timeline.start(number, playsAt: now + delay)
            playedReal = false
            lastSoundFrame = nil
            forgetHistory()
            counters.worstLateness = .zero
            for i in slotBlock.indices { slotBlock[i] = -1 }
        } else if isQuiet || startsBurst, let newest = timeline.newest, number > newest {
            // Sound after silence, with everything received played: the burst starts afresh at
            // the allowance measured now (a game's clicks keep one stream going, and the first
            // click's allowance would hold for all of them); what the move skips is silence.
            counters.onsets += 1
            placeAfresh(number, at: now)
            timeline.start(number, playsAt: now + delay)
            forgetHistory()
        } else if let newest = timeline.newest, number > newest, holdsSilence(newest), let place = timeline.time(of: start) {
            // Sound after the host's silence while the burst before it still waits to play (an
            // allowance, grown or guessed, longer than the gap between bursts: a game's clicks
            // would keep it for good). The new burst is placed at the allowance measured now; the
            // timeline moves earlier, and the output plays what it holds late and catches up in
            // the silence before the new burst (`render`), as after a late pull.
            let wanted = now + jitter.allowance(at: now) + configuration.lead
            if place > wanted + Self.blockDuration(1) {
                counters.onsets += 1
                placeAfresh(number, at: now)
                timeline.origin!.time = timeline.origin!.time - (place - wanted)
            }
        }
        if !copy { jitter.observe(number, at: now) }
        if let position = timeline.position, start < position {
            // Its place has passed, in part or whole. A straggler (a newer block came first)
            // after whose start real sound has played is dropped once its whole place passed:
            // what came after it has played. The newest block, or one after whose start only
            // concealment or silence played (a click whose host's silent block came first), is
            // the sender's pace falling behind (jitter, a stalled host): the output goes back to
            // its start and the timeline with it, so it and the blocks after it play whole (a
            // click's start, or the host's silent block that tells the next click is a new burst).
            // That is the allowance growing by the lateness and the base allowance, up to its
            // largest; past that the sender's clock slipped, and the timeline follows it with the
            // stream's base allowance again (a slip).
            let behind = position - start
            let goesBack = number >= (timeline.newest ?? number) || (lastSoundFrame ?? .min) < start
            if goesBack ? behind > Int64(Self.capacity * Self.blockFrames) : start + Int64(Self.blockFrames) <= position {
                counters.late += 1
                return false
            }
            if goesBack {
                // It plays the base allowance from now, so the blocks after it have that much slack again.
                let back = behind + Self.frames(baseAllowance)
                moveLater(by: back)
                timeline.position = position - back
            }
        }
        if let newest = timeline.newest, number <= newest - Int64(Self.capacity) { counters.stale += 1; return false }
        let slot = Self.slot(of: number)
        if slotBlock[slot] == number { counters.duplicates += 1; return false }
        slotBlock[slot] = number
        let base = slot * 2 * Self.blockFrames
        for i in 0..<2 * Self.blockFrames { samples[base + i] = Int8(bitPattern: blockSamples[i]) }
        if number > timeline.newest ?? .min {
            timeline.newest = number
            // Never more held than the largest delay: a stalled host's backlog, sent at once, would
            // otherwise be placed block after block past it (after a slip, each at its place from
            // the slipped one), and a host killed then would sound on that long. The timeline moves
            // earlier; the output skips what it has not reached (counted as skips).
            let latest = now + configuration.maximumAllowance + configuration.lead
            if let place = timeline.time(of: start), place > latest {
                counters.trimmed += 1
                timeline.origin!.time = timeline.origin!.time - (place - latest)
                // The newest now waits the largest allowance: nothing may move it later.
                allowance = configuration.maximumAllowance
            }
        }
        if timeline.newest == number { newestSilent = !sounds(slot: slot) }
        return starts
    }

    /// Fills `out` (`2 × frames` samples, left and right interleaved) with what plays from
    /// `playsAt` on: the moment the output will play the first of these frames (for a sink with
    /// a queue, now plus what is queued).
    public mutating func render(into out: UnsafeMutableBufferPointer<Int8>, frames count: Int, playsAt time: MonotonicInstant) -> State {
        precondition(out.count >= 2 * count)
        guard var target = frame(at: time), let newest = timeline.newest, let origin = timeline.origin else {
            for i in 0..<2 * count { out[i] = 0 }
            return .idle
        }
        // A stream's first block to arrive need not be its first: one before it (reordered on
        // the link) is held too, and the burst starts there.
        let first = timeline.position == nil ? min(origin.frame, earliestHeldFrame() ?? origin.frame) : origin.frame
        if timeline.position == nil, target > first {
            // The stream's or burst's first pull plays past its first block's place: the output
            // plays further ahead than its stated lead (a card's queue rounded up, its clock run
            // ahead), or its thread woke late. The burst is not cut: it plays from its first frame
            // the base allowance from now, the allowance grown by the difference, but never past
            // the largest (a frame plays at most that long after its block arrived: a killed host
            // is silent within it); what that leaves behind is skipped.
            let back = min(target - first + Self.frames(baseAllowance), max(0, Self.frames(configuration.maximumAllowance - allowance)))
            if back > 0 {
                counters.regrown += 1
                allowance += Self.duration(frames: back)
                timeline.origin!.time += Self.duration(frames: back)
                target -= back
            }
            if target > first {
                counters.skips += 1
                counters.skippedFrames += Int(target - first)
                forget(from: first, to: target)
            }
        }
        var position = timeline.position ?? target
        if position < target - Int64(Self.tolerance) {
            // A late pull (the output's thread was held up): the sound it holds and has not played
            // plays late rather than not at all (a click skipped is a click lost); only the
            // silence and gaps before it are skipped, and the output catches up with the timeline
            // at the next silence. Never a frame later than the largest allowance after its place
            // would have it (a killed host is silent within that).
            // What it skips to keeps `burstSeparation` of what comes before the sound (a click
            // played late, then the next one straight after it, are one click to the hand).
            let limit = target - max(0, Self.frames(configuration.maximumAllowance - allowance))
            let from = max(position, limit), keep = Self.frames(Self.burstSeparation)
            if let sound = firstHeldSound(from: from, to: target + keep) { target = max(from, min(target, sound - keep)) }
        }
        if position < target - Int64(Self.tolerance) {
            counters.skips += 1
            counters.skippedFrames += Int(target - position)
            forget(from: position, to: target)
            position = target
        }
        for i in 0..<count {
            let number = SampleClock.block(of: position, size: Self.blockFrames)
            let offset = Int(position - number * Int64(Self.blockFrames))
            let slot = Self.slot(of: number)
            if slotBlock[slot] == number {
                let base = slot * 2 * Self.blockFrames + 2 * offset
                out[2 * i] = samples[base]
                out[2 * i + 1] = samples[base + 1]
                remember(left: out[2 * i], right: out[2 * i + 1])
                playedReal = true
                if out[2 * i] != 0 || out[2 * i + 1] != 0 { lastSoundFrame = position }
                concealPeriod = 0
                concealed = 0
                if offset == Self.blockFrames - 1 {
                    slotBlock[slot] = -1
                    counters.played += 1
                }
            } else {
                if offset == 0, number <= newest, number >= origin.frame / Int64(Self.blockFrames) { counters.missing += 1 }
                conceal(into: out, at: i)
            }
            position += 1
        }
        timeline.position = position
        return timeline.endIfDead(after: configuration.deadLink) ? .idle : .playing
    }

    /// The ring slot block `number` is held in.
    private static func slot(of number: Int64) -> Int { Int(number & Int64(capacity - 1)) }

    /// A stream or burst placed afresh: the allowance measured now, and its pace from this block.
    private mutating func placeAfresh(_ number: Int64, at now: MonotonicInstant) {
        jitter.startStream()
        baseAllowance = jitter.allowance(at: now)
        allowance = baseAllowance
        firstArrival = (number, now)
    }

    /// The timeline `back` frames later: the allowance grows by it, up to its largest; past that
    /// the sender's (or the output's) clock slipped, and the timeline follows it with the stream's
    /// base allowance again.
    private mutating func moveLater(by back: Int64) {
        let grown = allowance + Self.duration(frames: back)
        if grown <= configuration.maximumAllowance {
            counters.regrown += 1
            allowance = grown
        } else {
            counters.slips += 1
            allowance = baseAllowance
        }
        timeline.origin!.time += Self.duration(frames: back)
    }

    /// Whether the output plays silence with nothing received left to play: past the newest
    /// block, which was silent (the host sends one as its sound ends). A gap after sound is a
    /// loss, not a silence: the stream goes on where it was.
    /// A burst none of whose frames has played is not silence (its first block's place passed
    /// unplayed: taking it for silence placed each next block afresh, and none played).
    private var isQuiet: Bool {
        guard remembered > 0, let position = timeline.position, let newest = timeline.newest else { return false }
        return position >= timeline.firstFrame(of: newest + 1) && lastBlockSilent()
    }

    /// The first frame of the earliest block held.
    private func earliestHeldFrame() -> Int64? {
        guard let newest = timeline.newest else { return nil }
        var earliest: Int64?
        for number in slotBlock where number >= newest - Int64(Self.capacity) + 1 && number <= newest {
            earliest = min(earliest ?? number, number)
        }
        return earliest.map { $0 * Int64(Self.blockFrames) }
    }

    /// The first frame in `from..<to` of a received block that sounds (one the ring still holds).
    private func firstHeldSound(from: Int64, to: Int64) -> Int64? {
        guard let newest = timeline.newest, to > from else { return nil }
        var number = max(SampleClock.block(of: from, size: Self.blockFrames), newest - Int64(Self.capacity) + 1)
        while number <= newest, number * Int64(Self.blockFrames) < to {
            let slot = Self.slot(of: number)
            if slotBlock[slot] == number, sounds(slot: slot) { return max(from, number * Int64(Self.blockFrames)) }
            number += 1
        }
        return nil
    }

    /// Whether block `number` is held, unplayed, and silent (the host's end of a burst).
    private func holdsSilence(_ number: Int64) -> Bool {
        let slot = Self.slot(of: number)
        return slotBlock[slot] == number && !sounds(slot: slot)
    }

    /// Whether the block held in `slot` has any sound.
    private func sounds(slot: Int) -> Bool {
        let base = slot * 2 * Self.blockFrames
        for i in 0..<2 * Self.blockFrames where samples[base + i] != 0 { return true }
        return false
    }

    /// Drops the blocks a late pull skipped over, `from` to `to` (their frames are counted as
    /// skipped). A silent one among them is the host's end of a burst: what the output skips to
    /// is no continuation of what it played, so the gap after it is not concealed (a catch-up
    /// that skipped a burst's end and repeated its sound into the next burst merged two clicks).
    private mutating func forget(from: Int64, to: Int64) {
        var f = from
        while f < to {
            let number = f / Int64(Self.blockFrames)
            let slot = Self.slot(of: number)
            if slotBlock[slot] == number {
                slotBlock[slot] = -1
                if !sounds(slot: slot) { concealPeriod = -1 }
            }
            f = (number + 1) * Int64(Self.blockFrames)
        }
        // Skipped past where the concealment of the last sound belonged (the host's silent block
        // after it lost): what is left of it would play just before the next sound, one burst
        // with it to the hand.
        if let last = lastSoundFrame, to - last >= Self.frames(configuration.concealment) { concealPeriod = -1 }
    }

    private mutating func remember(left: Int8, right: Int8) {
        history[2 * historyEnd] = left
        history[2 * historyEnd + 1] = right
        historyEnd = (historyEnd + 1) % Self.historyFrames
        remembered = min(remembered + 1, Self.historyFrames)
    }

    /// A new stream or burst: what played before it is no signal to conceal with.
    private mutating func forgetHistory() {
        remembered = 0
        concealPeriod = 0
        concealed = 0
    }

    /// A frame of concealment: the last real signal's period repeated, fading linearly to zero
    /// over `concealment` of output after the last real frame; silence after that, or with
    /// nothing to repeat.
    private mutating func conceal(into out: UnsafeMutableBufferPointer<Int8>, at i: Int) {
        out[2 * i] = 0
        out[2 * i + 1] = 0
        guard playedReal else { return }
        let gap = concealed + 1
        let length = Self.frames(configuration.concealment)
        guard gap < length else { return }
        concealed = gap
        if concealPeriod == 0 { concealPeriod = lastBlockSilent() ? -1 : findPeriod() }
        // After silence there is nothing to conceal: repeating a period would bring back sound
        // from before it.
        guard concealPeriod > 0 else { return }
        counters.concealedFrames += 1
        // The frame one period back (repeatedly) within the history.
        let back = Int((gap - 1) % Int64(concealPeriod)) + 1
        let index = ((historyEnd - concealPeriod + back - 1) % Self.historyFrames + Self.historyFrames) % Self.historyFrames
        let gain = Double(length - gap) / Double(length)
        out[2 * i] = Int8((Double(history[2 * index]) * gain).rounded())
        out[2 * i + 1] = Int8((Double(history[2 * index + 1]) * gain).rounded())
    }

    /// Whether the last block's worth of real signal was silence (frames from before this burst count as silence).
    private func lastBlockSilent() -> Bool {
        let n = Self.historyFrames
        for age in stride(from: 1, through: min(Self.blockFrames, remembered), by: 1) {
            let index = ((historyEnd - age) % n + n) % n
            if history[2 * index] != 0 || history[2 * index + 1] != 0 { return false }
        }
        return true
    }

    /// The period (in frames, 2 to half of what this burst has played) whose shift best matches
    /// the last real signal: the lag of least mean difference; -1 (nothing to repeat) before the
    /// burst has played four frames.
    private func findPeriod() -> Int {
        let n = remembered, ring = Self.historyFrames
        guard n >= 4 else { return -1 }
        func sample(_ age: Int) -> Int {  // age 1: the newest frame; left and right summed
            let index = ((historyEnd - age) % ring + ring) % ring
            return Int(history[2 * index]) + Int(history[2 * index + 1])
        }
        var best = n / 2, bestScore = Int.max
        for lag in 2...(n / 2) {
            var score = 0
            for age in 1...(n - lag) { score += abs(sample(age) - sample(age + lag)) }
            // Per compared frame, weighted to prefer the shorter of two equal lags (a period's multiples match too).
            let normalised = score * 64 / (n - lag)
            if normalised < bestScore { bestScore = normalised; best = lag }
        }
        return best
    }
}
