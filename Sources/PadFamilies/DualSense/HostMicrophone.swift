import Foundation
import Logging
import MonotonicTime
import PadDevices
import PadSystem
import WireProtocol

/// The host pad's microphone, played from the physical pad's (docs/audio.md): while a program on
/// the host records from the host pad (its isochronous IN packets are taken), the client is asked
/// to record the physical pad's microphone (`MicrophoneRequest`, a lease renewed every 500 ms);
/// its frames are decoded onto a playout and fill the IN packets, silence where none is due.
///
/// - `fill` runs on the USB device's thread; `receive` and `takeRequests` on the input path.
/// - `descriptor` wakes the input path when recording starts, so the first request goes at once.
public final class HostMicrophone: @unchecked Sendable {
    /// The lease a request gives, and how often it is renewed while recording goes on.
    static let lease: UInt16 = 2000
    static let renewal: Duration = .milliseconds(500)
    /// No IN packet for this long: the recording stopped.
    static let idleAfter: Duration = .milliseconds(200)
    /// How far off its time a recording program's driver takes the IN packets: several complete
    /// at once (a transfer), so the playout places frames that much later, and a pull that far
    /// behind is the next transfer, not a late one.
    static let burst: Duration = .milliseconds(20)
    /// Bytes of one 48 kHz frame of the microphone: 2 channels of 16 bits.
    static let frameBytes = 4

    public let slot: PadSlot
    private let lock = NSLock()
    private var receiver: OpusReceiver?
    private var lastPull: MonotonicInstant?
    private var asked: MonotonicInstant?
    /// The next request's number.
    private var sequence = WireSequence(0)
    private var pcm = [Int16](repeating: 0, count: 2 * 48 * 4)
    private let wake = WakePipe()
    public private(set) var framesReceived = 0
    public private(set) var unaskedFrames = 0
    private let log = Logger(label: "padgate.host.microphone")

    public init(slot: PadSlot) throws {
        self.slot = slot
        receiver = try OpusReceiver(configuration: .init(lead: Self.burst, lateness: Self.burst))
    }

    public var descriptor: FileDescriptor { wake.descriptor }

    /// One IN packet: what the playout has for now (silence without a stream).
    public func fill(_ packet: UnsafeMutableRawBufferPointer, at now: MonotonicInstant = .now) {
        let frames = min(packet.count / Self.frameBytes, pcm.count / 2)
        let first = lock.withLock { () -> Bool in
            let first = lastPull.map { now - $0 > Self.idleAfter } ?? true
            lastPull = now
            // Every byte of the packet is written: silence past its whole frames, and without a stream.
            if let base = packet.baseAddress { memset(base, 0, packet.count) }
            guard frames > 0, receiver != nil else { return first }
            _ = pcm.withUnsafeMutableBufferPointer { receiver!.render(into: $0, frames: frames, playsAt: now) }
            pcm.withUnsafeBytes { packet.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(frames * Self.frameBytes))) }
            return first
        }
        if first { wake.wake() }
    }

    /// A frame of the physical pad's microphone, from the client.
    /// Frames are taken only while this host asks for them: a client's frames at other times
    /// (unasked, or after the stop) are dropped and counted, never decoded.
    public func receive(_ frame: MicrophoneFrame, at now: MonotonicInstant = .now) {
        lock.withLock {
            guard asked != nil else { unaskedFrames += 1; return }
            framesReceived += 1
            receiver?.receive(frame, at: now)
        }
    }

    /// The request the client should have now: a renewed lease while recording goes on, a stop
    /// once it ended, nothing otherwise.
    public func takeRequests(into messages: inout [WireMessage], now: MonotonicInstant = .now) {
        wake.drain()
        lock.withLock {
            let recording = lastPull.map { now - $0 <= Self.idleAfter } ?? false
            if recording {
                guard asked.map({ now - $0 >= Self.renewal }) ?? true else { return }
                if asked == nil { log.debug("slot \(slot.rawValue): a program records from the pad: asking its client for the pad's microphone at \(now.nanoseconds / 1000) µs (monotonic)") }
                asked = now
                messages.append(.microphoneRequest(MicrophoneRequest(slot: slot, sequence: sequence, ttlMillis: Self.lease)))
                sequence = sequence.next
            } else if asked != nil {
                log.debug("slot \(slot.rawValue): the recording ended (\(framesReceived) frames came): the client stops the pad's microphone")
                asked = nil
                messages.append(.microphoneRequest(MicrophoneRequest(slot: slot, sequence: sequence, ttlMillis: 0)))
                sequence = sequence.next
            }
        }
    }

    /// When `takeRequests` must run next without a wake (a renewal, or the stop after recording).
    public var nextDeadline: MonotonicInstant? {
        lock.withLock {
            guard let asked else { return nil }
            let stop = (lastPull ?? asked) + Self.idleAfter
            return min(asked + Self.renewal, stop)
        }
    }
}
