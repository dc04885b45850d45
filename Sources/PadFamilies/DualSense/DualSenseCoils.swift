import Feedback
import Foundation
import HIDCodecs
import Logging
import MonotonicTime
import PadDevices
import PadSystem
import WireProtocol

/// A physical DualSense's voice coils playing the host's haptics stream: blocks from the link go
/// into a `HapticsPlayout`, and a thread of their own takes the signal out at the pad's pace.
///
/// - **Bluetooth**: report 0x32 every 10.667 ms (32 frames at 3 kHz), on a timerfd; while the
///   host pad's speaker pair sounds, report 0x36 in its place, with the speaker's Opus frame.
/// - **USB**: the pad's own sound card, channels 2-3 at 48 kHz, 5 ms at a time, with
///   `queue` held by ALSA; the blocking writes pace it. The speaker pair on channels 0-1.
///
/// Over Bluetooth the thread runs only while a stream plays; over USB, from the session's first
/// stream to `close()`, the card's stream open on silence between bursts, so no burst waits for
/// the card to start (tens of ms idle, hundreds on a busy machine). It runs at input priority
/// where the process may have it (a game's load must not starve the coils into gaps). Silence
/// ends every stream and `close()`: two silent reports over Bluetooth, the ALSA stream dropped.
public final class DualSenseCoils: HapticsOutput, @unchecked Sendable {
    public enum Output: Sendable {
        case bluetooth(hidraw: String)
        case usb(card: Int)
    }

    /// What ALSA holds ahead over USB: four 5 ms periods (with two, a busy machine's card
    /// underran and failed its stream with EIO).
    public static let usbQueue: Duration = .milliseconds(20)
    /// One block's frames at the card's 48 kHz.
    static let usbPeriodFrames = HapticsPlayout.blockFrames * CoilUpsampler.factor

    public let output: Output
    /// How far ahead of its place a block or speaker frame is played: the output's own queue.
    private let lead: Duration
    /// Guards `playout`, `speaker`, `running` and `stopping`.
    private let lock = NSLock()
    private var playout: HapticsPlayout
    /// The host pad's speaker pair, over USB (channels 0-1 of the same card stream), decoded as
    /// frames arrive; nil until the first frame, or where libopus failed.
    private var speaker: OpusReceiver?
    /// Over Bluetooth: the speaker's frames as the pad takes them (made at the first sound).
    private var speakerEncoder: BluetoothSpeakerEncoder?
    private var speakerUnavailable = false
    /// The link's jitter from its pings (`observeLink`), for a speaker playout made later.
    private var linkJitter: Duration?
    private var running = false
    private var stopping = false
    /// The output failed (the pad gone, its card busy): blocks are dropped until a new session
    /// makes a new one, rather than a thread started and failing for each.
    private var broken = false
    private var thread: JoinableThread?
    /// The Bluetooth reports' numbering, across streams (the output thread's alone).
    private var stream = DualSenseHapticsReport.Stream()
    /// USB streams that failed in a row (the output thread's alone).
    private var streamFailures: [MonotonicInstant] = []
    /// A busy machine's card fails its stream now and then, and it starts again; this many
    /// failures within `failureWindow` is a card that no longer plays.
    static let failuresBeforeGivingUp = 4
    static let failureWindow: Duration = .seconds(2)
    private let log = Logger(label: "padgate.feedback.coils")

    public init(output: Output, configuration: HapticsPlayout.Configuration? = nil) {
        self.output = output
        let lead: Duration
        switch output {
        case .bluetooth: lead = DualSenseHapticsReport.interval
        case .usb: lead = Self.usbQueue
        }
        self.lead = lead
        playout = HapticsPlayout(configuration: configuration ?? HapticsPlayout.Configuration(lead: lead))
    }

    deinit { close() }

    /// What the playout counted (for status lines and tests).
    public var counters: HapticsPlayout.Counters { lock.withLock { playout.counters } }

    /// A block from the host, on the forwarding thread; starts the output thread with a stream.
    public func receive(_ block: HapticsBlock, at now: MonotonicInstant = .now) {
        let (start, onset) = lock.withLock { () -> (Bool, Duration?) in
            guard !stopping, !broken else { return (false, nil) }
            let before = playout.counters.streams + playout.counters.onsets
            playout.receive(block, at: now)
            let onset = playout.counters.streams + playout.counters.onsets > before ? playout.delay : nil
            guard !running, playout.isPlaying else { return (false, onset) }
            running = true
            return (true, onset)
        }
        // Each burst's first block: when it came and how long it waits to play (the benchmark's
        // stages, make bench-haptics).
        if let onset {
            log.debug("haptics: a burst's first block received at \(now.nanoseconds / 1000) µs (monotonic), plays \(onset) later (allowance \(onset - lead), lead \(lead))")
        }
        guard start else { return }
        startThread()
    }

    /// Over USB, the card's stream from the session's start, silent until a block sounds: starting
    /// it costs tens of ms idle and hundreds on a busy machine, which a burst would otherwise wait
    /// (docs/haptics.md). Over Bluetooth nothing: a report stream starts with its first report.
    public func open() {
        guard case .usb = output else { return }
        let start = lock.withLock { () -> Bool in
            guard !stopping, !broken, !running else { return false }
            running = true
            return true
        }
        if start { startThread() }
    }

    private func startThread() {
        thread?.join()  // the last stream's thread has ended (it cleared `running`)
        thread = JoinableThread { [self] in ThreadPriority.raisedForInput { play() } }
    }

    public func observeLink(jitter: Duration) {
        lock.withLock {
            linkJitter = jitter
            playout.seed(linkJitter: jitter)
            speaker?.seed(linkJitter: jitter)
        }
    }

    /// What the speaker's playout counted (nil: no speaker frame yet).
    public var speakerCounters: AudioPlayout.Counters? { lock.withLock { speaker?.playout.counters } }

    /// A frame of the host pad's speaker pair, on the forwarding thread: decoded (a gap before it
    /// concealed by the decoder first) onto its playout.
    public func receive(_ frame: SpeakerFrame, at now: MonotonicInstant) {
        let start = lock.withLock { () -> Bool in
            guard !stopping, !broken, !speakerUnavailable else { return false }
            if speaker == nil {
                do {
                    speaker = try OpusReceiver(configuration: .init(lead: lead))
                    if let linkJitter { speaker?.seed(linkJitter: linkJitter) }
                } catch {
                    log.warning("the pad's speaker stays silent: \(error)")
                    speakerUnavailable = true
                    return false
                }
            }
            speaker!.receive(frame, at: now)
            guard !running, speaker!.playout.isPlaying else { return false }
            running = true
            return true
        }
        if start { startThread() }
    }

    /// Silence now, and no more streams.
    public func close() {
        lock.withLock { stopping = true }
        thread?.join()
        thread = nil
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    /// Streams, until one ends with no next one waiting, or `close()`.
    private func play() {
        repeat {
            let (began, before, delay) = lock.withLock { (MonotonicInstant.now, playout.counters, playout.delay) }
            log.debug("haptics stream from \(began.nanoseconds / 1000) µs (monotonic), delay \(delay)")
            defer {
                let (after, allowance) = lock.withLock { (playout.counters, playout.allowance) }
                log.debug("haptics stream ended after \(MonotonicInstant.now - began): \(after.received - before.received) blocks received, \(after.played - before.played) played, \(after.late - before.late) late, \(after.missing - before.missing) missing, \(after.skips - before.skips) skips (\(after.skippedFrames - before.skippedFrames) frames), \(after.recovered - before.recovered) recovered, \(after.regrown - before.regrown) regrown, \(after.slips - before.slips) slips, allowance \(allowance), the latest block \(after.worstLateness) behind the first's pace")
            }
            do {
                switch output {
                case .bluetooth(let path): try playReports(to: HIDRawDevice(path: path))
                case .usb(let card):
                    let playback = try ALSAPlayback(card: card, channels: 4, rate: 48_000, latency: Self.usbQueue)
                    do {
                        try playAudio(on: playback)
                    } catch {
                        // The card's stream failed (an underrun it could not recover from): this
                        // stream ends silent, and another starts, unless it keeps failing.
                        playback.stop()
                        let now = MonotonicInstant.now
                        streamFailures.removeAll { now - $0 > Self.failureWindow }
                        streamFailures.append(now)
                        guard streamFailures.count >= Self.failuresBeforeGivingUp else {
                            log.notice("the voice coils' stream failed and starts again: \(error)")
                            continue
                        }
                        throw error
                    }
                }
            } catch {
                log.warning("the voice coils stopped, and take no more haptics this session: \(error)")
                lock.withLock { broken = true; running = false }
                return
            }
        } while lock.withLock { () -> Bool in
            // A block that started a stream while the last one ended is played by this thread.
            if (playout.isPlaying || speaker?.playout.isPlaying == true) && !stopping { return true }
            running = false
            return false
        }
    }

    /// The speaker pair's next `frames` (silence without a stream).
    private func renderSpeaker(_ buffer: inout [Int16], frames: Int, playsAt: MonotonicInstant) -> HapticsPlayout.State {
        lock.withLock {
            guard !stopping, speaker != nil else {
                for i in buffer.indices { buffer[i] = 0 }
                return .idle
            }
            return buffer.withUnsafeMutableBufferPointer { speaker!.render(into: $0, frames: frames, playsAt: playsAt) }
        }
    }

    private func render(_ buffer: inout [Int8], frames: Int, playsAt: MonotonicInstant) -> HapticsPlayout.State {
        lock.withLock {
            guard !stopping else { return .idle }
            return buffer.withUnsafeMutableBufferPointer { playout.render(into: $0, frames: frames, playsAt: playsAt) }
        }
    }

    private func playReports(to device: HIDRawDevice) throws {
        let timer = try PeriodicTimer(interval: DualSenseHapticsReport.interval)
        var wait = PollSet<Bool>()
        wait.add(timer.descriptor, true)
        var samples = [Int8](repeating: 0, count: 2 * DualSenseHapticsReport.framesPerReport)
        var report = [UInt8](repeating: 0, count: DualSenseHapticsReport.length)
        // The speaker: a report slot's 512 frames of sound.
        var speakerReport = [UInt8](repeating: 0, count: DualSenseSpeakerReport.length)
        var slot = [Int16](repeating: 0, count: 2 * DualSenseSpeakerReport.slotFrames)
        var spoke = false
        /// The report for this slot: 0x36 while the speaker sounds (and at the end, if it spoke), else 0x32.
        func send(speaking: Bool) throws {
            if speaking, let encoder = encoderForSpeaker() {
                spoke = true
                try samples.withUnsafeBufferPointer { coils in
                    try slot.withUnsafeBufferPointer { try encoder.fill(&speakerReport, sound: $0, coils: coils, stream: &stream) }
                }
                try device.write(speakerReport)
            } else {
                samples.withUnsafeBufferPointer { stream.fill(&report, samples: $0) }
                try device.write(report)
            }
        }
        defer {
            // Twice: the pad plays what it has buffered, and silence replaces it (the speaker's
            // too, if it spoke).
            for i in samples.indices { samples[i] = 0 }
            for i in slot.indices { slot[i] = 0 }
            for _ in 0..<2 { try? send(speaking: spoke) }
        }
        while true {
            let now = MonotonicInstant.now
            let coils = render(&samples, frames: DualSenseHapticsReport.framesPerReport, playsAt: now)
            let sounding = renderSpeaker(&slot, frames: DualSenseSpeakerReport.slotFrames, playsAt: now)
            guard coils == .playing || sounding == .playing else { return }
            try send(speaking: sounding == .playing)
            wait.wait(timeout: DualSenseHapticsReport.interval * 2) { _, _ in }
            _ = timer.takeExpirations()
        }
    }

    /// The Bluetooth speaker's encoder (nil where libopus failed: the coils play on without it).
    private func encoderForSpeaker() -> BluetoothSpeakerEncoder? {
        if let speakerEncoder { return speakerEncoder }
        guard lock.withLock({ !speakerUnavailable }) else { return nil }
        do {
            speakerEncoder = try BluetoothSpeakerEncoder()
        } catch {
            log.warning("the pad's speaker stays silent: \(error)")
            lock.withLock { speakerUnavailable = true }
        }
        return speakerEncoder
    }

    private func playAudio(on playback: ALSAPlayback) throws {
        let frames = HapticsPlayout.blockFrames
        var samples = [Int8](repeating: 0, count: 2 * frames)
        var period = [Int16](repeating: 0, count: Self.usbPeriodFrames * 4)
        var upsampler = CoilUpsampler()
        // ALSA plays what is written end to end: each period plays where the last one ended, so
        // the timeline follows the card's own pace. It is put back on the clock (where the card
        // says the next period plays) after a restart (an underrun: the thread was held up), while
        // nothing sounds (a new stream's blocks have their places on the clock, not on a card
        // that fell behind meanwhile), and when the two part by more than the card's queue: a
        // card whose clock slipped (an emulated pad's on a busy machine) otherwise left a later
        // burst's blocks waiting for a place the output never reached.
        var playsAt = MonotonicInstant.now
        var speakerPeriod = [Int16](repeating: 0, count: 2 * Self.usbPeriodFrames)
        while true {
            let coils = render(&samples, frames: frames, playsAt: playsAt)
            let sounding = renderSpeaker(&speakerPeriod, frames: Self.usbPeriodFrames, playsAt: playsAt)
            let state: HapticsPlayout.State = coils == .playing || sounding == .playing ? .playing : .idle
            // Between streams the card's stream stays open on silence until the session ends.
            if state == .idle, isStopping { return playback.stop() }
            upsampler.fill(&period, from: samples)
            for i in 0..<Self.usbPeriodFrames {
                period[4 * i] = speakerPeriod[2 * i]
                period[4 * i + 1] = speakerPeriod[2 * i + 1]
            }
            let stalls = playback.stalls
            let restarted = try period.withUnsafeBufferPointer { try playback.write($0) }
            if playback.stalls > stalls { log.debug("the pad's card took nothing for its wait time (its clock stalled); the write waited on (\(playback.stalls) so far)") }
            let paced = playsAt + HapticsBlock.duration, onTheClock = MonotonicInstant.now + playback.queued
            let parted = paced > onTheClock ? paced - onTheClock : onTheClock - paced
            playsAt = restarted || state == .idle || parted > Self.usbQueue ? onTheClock : paced
        }
    }
}

/// 3 kHz signed 8-bit stereo to the pad's 48 kHz 16-bit, coils on channels 2 and 3 of 4: linear
/// between samples (16 steps each), so the coils get no 3 kHz staircase; the headphone pair silent.
public struct CoilUpsampler: Sendable {
    private var lastLeft = 0, lastRight = 0
    static let factor = HapticsDecimator.factor
    /// ±127 to ±32766.
    static let gain = 258

    public init() {}

    public mutating func fill(_ period: inout [Int16], from samples: [Int8]) {
        let frames = samples.count / 2
        precondition(period.count == frames * Self.factor * 4)
        for i in 0..<frames {
            let left = Int(samples[2 * i]) * Self.gain, right = Int(samples[2 * i + 1]) * Self.gain
            for step in 0..<Self.factor {
                let at = 4 * (i * Self.factor + step)
                period[at] = 0
                period[at + 1] = 0
                period[at + 2] = Int16(lastLeft + (left - lastLeft) * (step + 1) / Self.factor)
                period[at + 3] = Int16(lastRight + (right - lastRight) * (step + 1) / Self.factor)
            }
            lastLeft = left
            lastRight = right
        }
    }
}

/// The speaker's sound as a Bluetooth DualSense takes it: each report slot's 512 frames squeezed
/// into 480, encoded as the pad's Opus (10 ms, a constant 160 kbit/s: 200 bytes), and written into
/// report 0x36 with the coils' samples (docs/audio.md). Its buffers are its own: no allocation
/// per report.
public final class BluetoothSpeakerEncoder {
    private let encoder: OpusEncoder
    private var squeezed = [Int16](repeating: 0, count: 2 * DualSenseSpeakerReport.opusFrameSamples)
    private var packet = [UInt8](repeating: 0, count: DualSenseSpeakerReport.opusPacketLength)

    public init() throws {
        var settings = OpusEncoder.Settings()
        settings.frameSamples = DualSenseSpeakerReport.opusFrameSamples
        settings.bitrate = DualSenseSpeakerReport.opusBitrate
        settings.constantRate = true
        settings.maximumPacket = DualSenseSpeakerReport.opusPacketLength
        encoder = try OpusEncoder(settings)
    }

    /// The next report of `stream` into `report` (`DualSenseSpeakerReport.length` bytes):
    /// `sound` is a slot's 512 interleaved stereo frames, `coils` as for report 0x32.
    public func fill(_ report: inout [UInt8], sound: UnsafeBufferPointer<Int16>, coils: UnsafeBufferPointer<Int8>,
                     stream: inout DualSenseHapticsReport.Stream) throws {
        squeezed.withUnsafeMutableBufferPointer { DualSenseSpeakerReport.squeeze(sound, into: $0) }
        let length = try squeezed.withUnsafeBufferPointer { pcm in try packet.withUnsafeMutableBufferPointer { try encoder.encode(pcm, into: $0) } }
        packet.withUnsafeBufferPointer { stream.fill(&report, samples: coils, speaker: UnsafeBufferPointer(rebasing: $0[0..<length])) }
    }
}

extension HapticsPlayout {
    /// A block from the wire: the copy of the block before it first (where that one was lost, it
    /// plays in its place), then the block. True when a stream starts.
    @discardableResult
    public mutating func receive(_ block: HapticsBlock, at now: MonotonicInstant) -> Bool {
        _ = block.withPreviousSamples { receiveCopy(sequence: block.sequence.rawValue &- 1, samples: $0, at: now) }
        return block.withSamples { receive(sequence: block.sequence.rawValue, samples: $0, at: now) }
    }
}
