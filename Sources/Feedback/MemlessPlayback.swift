import HIDCodecs
import MonotonicTime

/// Force-feedback rumble effects played the way the kernel's ff-memless plays them for real pads
/// (drivers/input/ff-memless.c), for virtual pads made with uinput, which have no kernel timer:
/// playing an effect `count` times starts it after its `delay`, stops it `length` later, and
/// replays it (after its delay again) until the count is spent; a length of 0 plays until stopped.
/// Effects playing at once add up per motor, saturating, as ff-memless combines rumble effects.
public struct MemlessPlayback: Sendable {
    public struct Effect: Equatable, Sendable {
        public var levels: MotorLevels
        public var delay: Duration
        /// `.zero`: until stopped.
        public var length: Duration
        public init(levels: MotorLevels, delay: Duration = .zero, length: Duration) {
            self.levels = levels; self.delay = delay; self.length = length
        }
    }

    struct Playing: Sendable {
        var count: Int32
        var playAt: MonotonicInstant
        var stopAt: MonotonicInstant?
    }

    /// At most this many effects are kept (ff-memless's FF_MEMLESS_EFFECTS).
    public static let maxEffects = 16
    private var effects: [Int: Effect] = [:]
    private var playing: [Int: Playing] = [:]
    /// When `levels` last ran: starts after it are changes still to come.
    private var evaluatedAt: MonotonicInstant?

    public init() {}

    /// A program uploaded (or replaced) an effect. A replaced effect that is playing starts over
    /// with its new timing, as ff-memless's upload does. False if the table is full.
    @discardableResult
    public mutating func upload(id: Int, _ effect: Effect, now: MonotonicInstant) -> Bool {
        guard effects[id] != nil || effects.count < Self.maxEffects else { return false }
        effects[id] = effect
        if let started = playing[id] { playing[id] = schedule(effect, count: started.count, now: now) }
        return true
    }

    public mutating func erase(id: Int) {
        effects[id] = nil
        playing[id] = nil
    }

    /// EV_FF with `value` = count: play that many times; 0 stops it.
    public mutating func play(id: Int, count: Int32, now: MonotonicInstant) {
        guard count > 0, let effect = effects[id] else { playing[id] = nil; return }
        playing[id] = schedule(effect, count: count, now: now)
    }

    private func schedule(_ effect: Effect, count: Int32, now: MonotonicInstant) -> Playing {
        let playAt = now + effect.delay
        return Playing(count: count, playAt: playAt, stopAt: effect.length == .zero ? nil : playAt + effect.length)
    }

    /// Moves every effect past the stops that are due, replaying those with count left, and
    /// returns the motors' combined level now.
    public mutating func levels(now: MonotonicInstant) -> MotorLevels {
        evaluatedAt = now
        var low = 0, high = 0
        // Runs on every pass of the host's loop: iterate the table itself (a copy of its keys would
        // allocate each time); only an effect that starts, stops or replays writes to it.
        for (id, current) in playing {
            var state = current
            guard let effect = effects[id] else { playing[id] = nil; continue }
            // A long-overdue repeat is caught up in one pass, not one stop per call.
            while let stop = state.stopAt, now >= stop {
                state.count -= 1
                guard state.count > 0 else { break }
                state.playAt = stop + effect.delay
                state.stopAt = state.playAt + effect.length
            }
            guard state.count > 0 else { playing[id] = nil; continue }
            if state.playAt != current.playAt || state.count != current.count { playing[id] = state }
            if now >= state.playAt {
                low += Int(effect.levels.low)
                high += Int(effect.levels.high)
            }
        }
        return MotorLevels(low: UInt8(min(low, 255)), high: UInt8(min(high, 255)))
    }

    /// When the combined level next changes by itself (an effect starts or stops); nil if never.
    /// A change that fell due after `levels` last looked is returned as it is, in the past, so a
    /// caller that waits for it wakes at once: a host pass that computed its deadline just after
    /// an effect's end would otherwise wait for nothing while the lease it renews kept the motors
    /// on.
    public func nextChange(after now: MonotonicInstant) -> MonotonicInstant? {
        var next: MonotonicInstant?
        for state in playing.values {
            if state.playAt > (evaluatedAt ?? now) { next = min(next ?? state.playAt, state.playAt) }
            // Every stop still held is one `levels` has not passed yet: due now or later.
            if let stop = state.stopAt { next = min(next ?? stop, stop) }
        }
        return next
    }

    public var isPlaying: Bool { !playing.isEmpty }
}
