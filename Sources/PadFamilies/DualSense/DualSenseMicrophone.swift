import Foundation
import Logging
import MonotonicTime
import PadDevices
import PadSystem
import WireProtocol

/// A USB DualSense's microphone (its card's capture, 2 channels of 16 bits at 48 kHz), recorded
/// for the host while the host's request lasts: 5 ms at a time, each Opus-encoded into a numbered
/// `MicrophoneFrame` and queued (the newest 32 kept) for the forwarding loop, which `wake` wakes.
/// It records only on request, on a thread of its own, and stops when the lease lapses, on a
/// request of 0 ms and on `close()`.
public final class DualSenseMicrophone: MicrophoneInput, @unchecked Sendable {
    static let capacity = 32
    /// How late the reader may be before the card loses frames (a capture's buffer adds no delay).
    static let buffer: Duration = .milliseconds(200)

    public let card: Int
    private let wake: WakePipe
    /// Guards everything below it.
    private let lock = NSLock()
    private var lease = MicrophoneLease()
    private var slot = PadSlot(0)
    private var running = false
    private var stopping = false
    private var broken = false
    private var frames: [MicrophoneFrame] = []
    public private(set) var dropped = 0
    public private(set) var recorded = 0
    private var thread: JoinableThread?
    private let log = Logger(label: "padgate.client.microphone")

    public init(card: Int, wake: WakePipe) {
        self.card = card
        self.wake = wake
        frames.reserveCapacity(Self.capacity)
    }

    deinit { close() }

    public func apply(_ request: MicrophoneRequest, at now: MonotonicInstant = .now) {
        let start = lock.withLock { () -> Bool in
            guard !stopping, !broken else { return false }
            guard lease.apply(request, at: now) else { return false }
            slot = request.slot
            guard lease.lasts(at: now), !running else { return false }
            running = true
            return true
        }
        guard start else { return }
        thread?.join()
        // A capture runs at the pace of the pad's clock: a busy machine must not make it overrun.
        thread = JoinableThread { [self] in ThreadPriority.raisedForInput { record() } }
    }

    public func take(_ body: (WireMessage) -> Void) {
        let taken = lock.withLock { () -> [MicrophoneFrame] in
            defer { frames.removeAll(keepingCapacity: true) }
            return frames
        }
        for frame in taken { body(.microphone(frame)) }
    }

    public func close() {
        lock.withLock { stopping = true }
        thread?.join()
        thread = nil
    }

    /// Whether recording goes on: the lease lasts and nobody closed it.
    private var leaseLasts: Bool {
        lock.withLock { !stopping && lease.lasts(at: .now) }
    }

    /// Recordings, one a lease, until a lease lapses with no renewal waiting (one that came while
    /// the last recording closed starts the next), `close()`, or a failure.
    private func record() {
        var sequence = WireSequence(0)
        repeat {
            recordOnce(numberingFrom: &sequence)
        } while lock.withLock { () -> Bool in
            if !stopping, !broken, lease.lasts(at: .now) { return true }
            running = false
            return false
        }
    }

    private func recordOnce(numberingFrom sequence: inout WireSequence) {
        let began = MonotonicInstant.now
        // Said where the user sees it: their pad's microphone is being recorded.
        log.notice("recording the pad's microphone for the host from \(began.nanoseconds / 1000) µs (monotonic)")
        var overruns = 0
        var encoding = Duration.zero, longestEncode = Duration.zero, longestRead = Duration.zero, shape = ""
        do {
            let capture = try ALSACapture(card: card, channels: Opus.channels, rate: Opus.sampleRate, period: Opus.frameDuration, buffer: Self.buffer)
            defer { overruns = capture.overruns; capture.stop() }
            shape = "periods of \(capture.periodFrames) frames, a buffer of \(capture.bufferFrames), "
            let encoder = try OpusEncoder()
            var pcm = [Int16](repeating: 0, count: Opus.channels * Opus.frameSamples)
            var packet = [UInt8](repeating: 0, count: Opus.maximumPacket)
            while leaseLasts {
                let readStarted = MonotonicInstant.now
                // Waits in short steps, so a lapsed lease or `close()` never waits on a stalled card.
                guard try pcm.withUnsafeMutableBufferPointer({ try capture.read(into: $0, while: { leaseLasts }) }) else { break }
                longestRead = max(longestRead, .now - readStarted)
                let encodeStarted = MonotonicInstant.now
                let length = try pcm.withUnsafeBufferPointer { pcm in try packet.withUnsafeMutableBufferPointer { try encoder.encode(pcm, into: $0) } }
                encoding += .now - encodeStarted
                longestEncode = max(longestEncode, .now - encodeStarted)
                lock.withLock {
                    guard let frame = MicrophoneFrame(slot: slot, sequence: sequence, packet: Array(packet.prefix(length))) else { return }
                    if frames.count == Self.capacity { frames.removeFirst(); dropped += 1 }
                    frames.append(frame)
                    recorded += 1
                }
                sequence = sequence.next
                wake.wake()
            }
            log.notice("the pad's microphone stopped recording at \(MonotonicInstant.now.nanoseconds / 1000) µs (monotonic), after \(MonotonicInstant.now - began): the host's lease ended")
        } catch {
            log.warning("the pad's microphone stopped, and records no more this session: \(error)")
            lock.withLock { broken = true }
        }
        log.debug("the pad's microphone closed after \(MonotonicInstant.now - began): \(recorded) frames recorded, \(dropped) dropped, \(overruns) overruns; \(shape)the longest read \(longestRead), encode \(longestEncode) (\(encoding) in all)")
    }
}

/// The host's requests to record a pad's microphone, as the client keeps them: each sets the
/// lease's end (at most 2 s on; 0: now), an older one than the newest (a renewal the network
/// delivered after the stop that followed it) changes nothing. Pure.
public struct MicrophoneLease: Sendable {
    public private(set) var ends: MonotonicInstant?
    private var newest: WireSequence?

    public init() {}

    /// Takes `request`; false when it was older than the newest and changed nothing.
    public mutating func apply(_ request: MicrophoneRequest, at now: MonotonicInstant) -> Bool {
        if let newest, !request.sequence.isNewer(than: newest) { return false }
        newest = request.sequence
        let ttl = min(request.ttlMillis, MicrophoneRequest.maximumMillis)
        ends = ttl == 0 ? nil : now + .milliseconds(Int(ttl))
        return true
    }

    public func lasts(at now: MonotonicInstant) -> Bool { ends.map { now < $0 } ?? false }
}
