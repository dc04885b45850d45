import MonotonicTime

/// A stream's sample arithmetic, for the haptics and speaker playouts: frame `f` of a stream whose
/// origin is `(frame, time)` plays at `time + (f - frame) / rate`.
enum SampleClock {
    static func frames(_ d: Duration, rate: Int) -> Int64 { Int64(d / .microseconds(1)) * Int64(rate) / 1_000_000 }
    static func duration(frames: Int64, rate: Int) -> Duration { .microseconds(frames * 1_000_000 / Int64(rate)) }

    /// Where the stream is at `time` (before the origin too).
    static func frame(at time: MonotonicInstant, origin: (frame: Int64, time: MonotonicInstant), rate: Int) -> Int64 {
        let elapsed = time - origin.time
        return origin.frame + (elapsed < .zero ? -frames(.zero - elapsed, rate: rate) : frames(elapsed, rate: rate))
    }

    /// The block (of `size` frames) holding `frame`, rounding down for negative frames too.
    static func block(of frame: Int64, size: Int) -> Int64 {
        frame >= 0 ? frame / Int64(size) : (frame - Int64(size) + 1) / Int64(size)
    }
}
