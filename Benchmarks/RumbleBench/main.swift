import Feedback
import Foundation
import HIDCodecs
import MonotonicTime
import SeededRandom

// Drives rumble through a seeded lossy channel (loss, jitter, hence reordering) from a scripted host
// track and measures how long the motors differ from what the host intends, for two policies:
//   padgate: state messages with sequence numbers and a lease, rendered by RumbleRenderer into finite segments;
//   SDL:     send on change, re-send every 2 s (SDL_RUMBLE_RESEND_MS), effects up to 65 535 ms
//            (SDL_MAX_RUMBLE_DURATION_MS); the pad applies whatever arrives, in arrival order.
// Usage: RumbleBench [--seed N] [--seconds S] [--loss P] [--jitter-ms J]

struct Options {
    var seed: UInt64 = 42
    var seconds = 120
    var loss = 0.20
    var jitterMs = 30
    var baseLatencyMs = 2

    init(_ arguments: [String]) {
        var it = arguments.makeIterator()
        while let word = it.next() {
            let value = it.next() ?? ""
            switch word {
            case "--seed": seed = UInt64(value) ?? seed
            case "--seconds": seconds = Int(value) ?? seconds
            case "--loss": loss = Double(value) ?? loss
            case "--jitter-ms": jitterMs = Int(value) ?? jitterMs
            default: FileHandle.standardError.write(Data("unknown option \(word)\n".utf8)); exit(2)
            }
        }
    }
}

/// The host's intended rumble: levels held for 40-800 ms, a third of them silent, ending on a non-zero level.
struct HostTrack {
    var changes: [(at: Int, levels: MotorLevels)] = []   // ms
    init(milliseconds: Int, rng: inout SplitMix64) {
        var t = 0
        while t < milliseconds {
            let silent = Int.random(in: 0..<3, using: &rng) == 0
            let levels = silent ? MotorLevels.silent
                : MotorLevels(low: UInt8.random(in: 1...255, using: &rng), high: UInt8.random(in: 0...255, using: &rng))
            changes.append((t, levels))
            t += Int.random(in: 40...800, using: &rng)
        }
        changes.removeAll { $0.at >= milliseconds - 500 }
        changes.append((milliseconds - 500, MotorLevels(low: 200, high: 200)))
    }
    func levels(at ms: Int) -> MotorLevels { changes.last { $0.at <= ms }?.levels ?? .silent }
}

struct Packet { var arrival: Int; var sequence: UInt64; var levels: MotorLevels; var ttlMs: Int }

/// Loss and jitter; jitter larger than the send interval reorders packets.
struct LossyChannel {
    var options: Options
    var rng: SplitMix64
    var inFlight: [Packet] = []
    var deadAt: Int
    mutating func send(_ p: Packet, at now: Int) {
        guard now < deadAt, Double.random(in: 0..<1, using: &rng) >= options.loss else { return }
        var q = p
        q.arrival = now + options.baseLatencyMs + Int.random(in: 0...options.jitterMs, using: &rng)
        inFlight.append(q)
    }
    mutating func deliver(at now: Int) -> [Packet] {
        let due = inFlight.filter { $0.arrival <= now }.sorted { $0.arrival < $1.arrival }
        inFlight.removeAll { $0.arrival <= now }
        return due
    }
}

protocol Policy {
    var name: String { get }
    /// Called every millisecond; returns what the pad's motors are doing at `now`.
    mutating func tick(now: Int, intended: MotorLevels, intendedChanged: Bool, channel: inout LossyChannel) -> MotorLevels
}

struct PadgatePolicy: Policy {
    let name = "padgate (lease 150 ms, state every 10 ms, 200 ms segments)"
    var renderer = RumbleRenderer()
    var sequence: UInt64 = 0
    var lastSend = -1_000_000
    let resendMs = 10, ttlMs = 150
    var padLevels = MotorLevels.silent
    var padRunsUntil = Int.max

    mutating func tick(now: Int, intended: MotorLevels, intendedChanged: Bool, channel: inout LossyChannel) -> MotorLevels {
        // Host: send on change, and re-send the state while anything (even silence) is intended recently.
        if intendedChanged || now - lastSend >= resendMs {
            sequence += 1
            channel.send(Packet(arrival: 0, sequence: sequence, levels: intended, ttlMs: ttlMs), at: now)
            lastSend = now
        }
        let t = MonotonicInstant.origin + .milliseconds(now)
        let arrived = channel.deliver(at: now)
        for p in arrived {
            renderer.receive(RumbleMessage(sequence: p.sequence, levels: p.levels, timeToLive: .milliseconds(p.ttlMs)), at: t)
        }
        if !arrived.isEmpty || (renderer.nextDeadline.map { $0 <= t } ?? false) {
            for action in renderer.step(now: t) {
                switch action {
                case .play(let levels, let segment):
                    padLevels = levels
                    padRunsUntil = now + Int(segment.components.seconds * 1000 + segment.components.attoseconds / 1_000_000_000_000_000)
                case .stop: padLevels = .silent
                }
            }
        }
        return now < padRunsUntil ? padLevels : .silent
    }
}

struct SDLKeepAlivePolicy: Policy {
    let name = "SDL keep-alive (on change + every 2 s, 65 s effects)"
    var lastSend = -1_000_000
    var lastSent = MotorLevels.silent
    var padLevels = MotorLevels.silent
    var padRunsUntil = Int.max
    let resendMs = 2000, effectMs = 65_535

    mutating func tick(now: Int, intended: MotorLevels, intendedChanged: Bool, channel: inout LossyChannel) -> MotorLevels {
        // SDL_JoystickRumble re-sends only while rumble is on; a change is sent at once.
        if intendedChanged || (!intended.isSilent && now - lastSend >= resendMs) {
            channel.send(Packet(arrival: 0, sequence: 0, levels: intended, ttlMs: effectMs), at: now)
            lastSend = now
            lastSent = intended
        }
        for p in channel.deliver(at: now) {   // no sequence numbers: arrival order wins
            padLevels = p.levels
            padRunsUntil = now + p.ttlMs
        }
        return now < padRunsUntil ? padLevels : .silent
    }
}

struct Result {
    var name: String
    var episodes: [Int]
    var divergedMs: Int
    var totalMs: Int
    var silenceAfterDeathMs: Int?
    func percentile(_ p: Double) -> Int {
        guard !episodes.isEmpty else { return 0 }
        let sorted = episodes.sorted()
        return sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)]
    }
}

func run<P: Policy>(_ policy: P, track: HostTrack, options: Options, channelSeed: UInt64, horizonMs: Int, deathMs: Int) -> Result {
    var policy = policy
    var channel = LossyChannel(options: options, rng: SplitMix64(seed: channelSeed), deadAt: deathMs)
    var episodes: [Int] = []
    var current = 0
    var diverged = 0
    var previous = MotorLevels.silent
    var silentSince: Int?
    for now in 0..<horizonMs {
        let intended = now < deathMs ? track.levels(at: now) : track.levels(at: deathMs - 1)
        let changed = now == 0 || intended != previous
        previous = intended
        let actual = policy.tick(now: now, intended: intended, intendedChanged: changed, channel: &channel)
        if now < deathMs {
            if actual != intended { current += 1; diverged += 1 } else if current > 0 { episodes.append(current); current = 0 }
        } else if actual.isSilent {
            if silentSince == nil { silentSince = now }
        } else {
            silentSince = nil
        }
    }
    if current > 0 { episodes.append(current) }
    return Result(name: policy.name, episodes: episodes, divergedMs: diverged, totalMs: deathMs,
                  silenceAfterDeathMs: silentSince.map { $0 - deathMs })
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
var trackRNG = SplitMix64(seed: options.seed)
let activeMs = options.seconds * 1000
let track = HostTrack(milliseconds: activeMs, rng: &trackRNG)
// After the channel dies we watch for 70 s: long enough for SDL's 65 s effect to run out.
let horizon = activeMs + 70_000
let channelSeed = options.seed &* 31 &+ 7
let results = [
    run(PadgatePolicy(), track: track, options: options, channelSeed: channelSeed, horizonMs: horizon, deathMs: activeMs),
    run(SDLKeepAlivePolicy(), track: track, options: options, channelSeed: channelSeed, horizonMs: horizon, deathMs: activeMs),
]

print("rumble divergence: seed \(options.seed), \(options.seconds) s track (\(track.changes.count) changes), "
      + "loss \(Int(options.loss * 100))%, latency \(options.baseLatencyMs)+0..\(options.jitterMs) ms (reordering), 1 ms resolution")
print("")
print("| policy | episodes | p50 ms | p99 ms | max ms | time diverged | silence after channel dies |")
print("|---|---:|---:|---:|---:|---:|---:|")
for r in results {
    let share = String(format: "%.2f%%", 100 * Double(r.divergedMs) / Double(r.totalMs))
    let silence = r.silenceAfterDeathMs.map { "\($0) ms" } ?? "never (> 70 s)"
    print("| \(r.name) | \(r.episodes.count) | \(r.percentile(0.5)) | \(r.percentile(0.99)) | \(r.episodes.max() ?? 0) | \(share) | \(silence) |")
}
let ours = results[0]
let p99OK = ours.percentile(0.99) <= 60
let silenceOK = (ours.silenceAfterDeathMs ?? .max) <= 300
print("")
print("targets: p99 divergence <= 60 ms: \(p99OK ? "met" : "MISSED"); silence <= 300 ms: \(silenceOK ? "met" : "MISSED")")
exit(p99OK && silenceOK ? 0 : 1)
