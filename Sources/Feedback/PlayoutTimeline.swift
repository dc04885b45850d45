import HIDCodecs
import MonotonicTime

/// The timeline a numbered stream plays on, one for the haptics and speaker playouts: which block
/// a 16-bit sequence number is, where the stream is at a time, whether a block is too far ahead
/// to wait for, and when a dead link ends the stream. The policies (late blocks, allowance,
/// concealment) stay in each playout.
struct PlayoutTimeline: Sendable {
    let rate: Int
    /// Frames per numbered block.
    let blockFrames: Int
    /// Frame `f` plays at `origin.time + (f - origin.frame) / rate`; nil: no stream.
    var origin: (frame: Int64, time: MonotonicInstant)?
    /// The next frame the output takes; nil until the stream's first pull.
    var position: Int64?
    /// The newest block's number, unwrapped from 16 bits.
    var newest: Int64?

    init(rate: Int, blockFrames: Int) { self.rate = rate; self.blockFrames = blockFrames }

    var isPlaying: Bool { origin != nil }

    /// Where the timeline is at `time` (nil: no stream).
    func frame(at time: MonotonicInstant) -> Int64? { origin.map { SampleClock.frame(at: time, origin: $0, rate: rate) } }

    /// The block a sequence number is: unwrapped against the newest (the 16 bits wrap every
    /// 5.5 minutes of 5 ms blocks); a stream's first is placed far from 0, so nothing before it
    /// numbers below 0.
    func number(of sequence: UInt16) -> Int64 { newest.map { Serial16.unwrap(sequence, near: $0) } ?? (1 << 32 + Int64(sequence)) }

    func firstFrame(of number: Int64) -> Int64 { number * Int64(blockFrames) }

    /// When frame `frame` plays (nil: no stream).
    func time(of frame: Int64) -> MonotonicInstant? { origin.map { $0.time + SampleClock.duration(frames: frame - $0.frame, rate: rate) } }

    /// Whether block `number` lies beyond what a ring of `ring` blocks holds from where the output
    /// is (or the timeline, before the first pull): a new stream, not a wait that keeps the output
    /// running on silence.
    func isBeyond(_ number: Int64, ring: Int, at now: MonotonicInstant) -> Bool {
        guard let reference = position ?? frame(at: now) else { return false }
        return firstFrame(of: number) > reference + Int64(ring * blockFrames)
    }

    /// A stream whose block `number` plays at `time`.
    mutating func start(_ number: Int64, playsAt time: MonotonicInstant) {
        origin = (firstFrame(of: number), time)
        position = nil
        newest = number
    }

    /// Ends the stream once the output is `deadLink` past the newest block's place; true if it did.
    mutating func endIfDead(after deadLink: Duration) -> Bool {
        guard let position, let newest, position >= firstFrame(of: newest + 1) + SampleClock.frames(deadLink, rate: rate) else { return false }
        origin = nil
        self.position = nil
        return true
    }
}
