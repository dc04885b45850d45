import Foundation
import HIDCodecs
import Logging
import MonotonicTime
import PadDevices
import PadSystem
import WireProtocol

/// The host's side of the haptics and speaker streams: what a game plays on the host pad's
/// voice coils (channels 2 and 3 of the USB pad's 4-channel 16-bit 48 kHz output, as its
/// isochronous OUT packets carry it) as numbered 5 ms `HapticsBlock`s at 3 kHz, and where the
/// client asked for it its speaker pair (channels 0 and 1) as numbered 5 ms Opus `SpeakerFrame`s,
/// queued for the input path.
///
/// - Blocks are numbered by their place in the stream, so the client places each by its number:
///   a block of silence after silence is not sent (a game that holds the pad's audio open
///   silently costs no datagrams), but it still takes its number. Each block sent carries a copy
///   of the one before when that was sent too.
/// - The queue is bounded (`capacity`, the newest kept): a stalled input path loses old haptics,
///   which the client would drop as late anyway, and never grows.
/// - `take` runs on the USB device's thread and allocates nothing; `descriptor` wakes the input
///   path, which encodes the speaker's frames as it drains them.
public final class HostAudioCapture: @unchecked Sendable {
    static let capacity = 32
    static let speakerSamples = 2 * Opus.frameSamples
    /// Bytes of one 48 kHz frame of the pad's output: 4 channels of 16 bits.
    static let frameBytes = 8

    public let slot: PadSlot
    /// Guards everything below.
    private let lock = NSLock()
    private var builder: HapticsBlock.Builder
    private var lastWasSilent = true
    /// The last block queued (without its own copy): the next carries it, so one lost datagram
    /// costs nothing.
    private var lastQueued: HapticsBlock?
    private var queue: [HapticsBlock]
    private var head = 0, count = 0
    /// A packet's trailing partial frame, carried to the next.
    private var partial = [UInt8](repeating: 0, count: frameBytes)
    private var partialCount = 0
    public private(set) var dropped = 0
    public private(set) var blocks = 0
    /// When the game's sound last began (a block with sound after silence), for the debug log.
    public private(set) var soundBegan: MonotonicInstant?
    private var soundReported = true
    private let wake = WakePipe()

    /// The speaker pair, where the client asked: 5 ms frames in a ring of `capacity`, numbered.
    private let encoder: OpusEncoder?
    private var speakerFrame: [Int16]
    private var speakerFilled = 0
    private var speakerSequence = WireSequence(0)
    private var speakerLastWasSilent = true
    private var speakerQueue: [Int16]
    private var speakerNumbers: [WireSequence]
    private var speakerHead = 0, speakerCount = 0
    public private(set) var speakerDropped = 0
    /// The drain's own: frames copied out of the ring, and the packet being encoded.
    private var draining: [Int16]
    private var drainingNumbers: [WireSequence]
    private var packet = [UInt8](repeating: 0, count: Opus.maximumPacket)

    public init(slot: PadSlot, speaker: Bool = false) {
        self.slot = slot
        builder = HapticsBlock.Builder(slot: slot)
        queue = [HapticsBlock](repeating: HapticsBlock(slot: slot, sequence: WireSequence(0)), count: Self.capacity)
        var encoder: OpusEncoder?
        if speaker {
            do { encoder = try OpusEncoder() } catch {
                Logger(label: "padgate.host").warning("slot \(slot.rawValue): the pad's speaker is not forwarded: \(error)")
            }
        }
        self.encoder = encoder
        let ring = encoder == nil ? 0 : Self.capacity
        speakerFrame = [Int16](repeating: 0, count: Self.speakerSamples)
        speakerQueue = [Int16](repeating: 0, count: ring * Self.speakerSamples)
        speakerNumbers = [WireSequence](repeating: WireSequence(0), count: ring)
        draining = [Int16](repeating: 0, count: ring * Self.speakerSamples)
        drainingNumbers = [WireSequence](repeating: WireSequence(0), count: ring)
    }

    /// Whether the speaker pair is captured.
    public var capturesSpeaker: Bool { encoder != nil }

    /// Readable while blocks wait in `drain`.
    public var descriptor: FileDescriptor { wake.descriptor }

    /// One isochronous OUT packet's payload.
    public func take(_ packet: UnsafeRawBufferPointer) {
        var woke = false
        lock.withLock {
            var index = 0
            // A frame split across packets (snd-usb-audio sends whole frames; a peer need not).
            while partialCount > 0, index < packet.count {
                partial[partialCount] = packet[index]
                partialCount += 1
                index += 1
                if partialCount == Self.frameBytes {
                    partialCount = 0
                    partial.withUnsafeBytes { woke = push(frame: $0, at: 0) || woke }
                }
            }
            while index + Self.frameBytes <= packet.count {
                woke = push(frame: packet, at: index) || woke
                index += Self.frameBytes
            }
            while index < packet.count {
                partial[partialCount] = packet[index]
                partialCount += 1
                index += 1
            }
        }
        if woke { wake.wake() }
    }

    /// One 48 kHz frame at `offset`: its coil channels (2, 3) into the decimator. True when a block was queued.
    private func push(frame: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        func sample(_ channel: Int) -> Int16 {
            Int16(bitPattern: UInt16(frame[offset + 2 * channel]) | UInt16(frame[offset + 2 * channel + 1]) << 8)
        }
        var queued = false
        if encoder != nil {
            speakerFrame[2 * speakerFilled] = sample(0)
            speakerFrame[2 * speakerFilled + 1] = sample(1)
            speakerFilled += 1
            if speakerFilled == Opus.frameSamples { speakerFilled = 0; queued = pushSpeakerFrame() }
        }
        return pushCoils(left: sample(2), right: sample(3)) || queued
    }

    /// A full 5 ms of the speaker pair: queued unless it is silence after silence (its number kept).
    private func pushSpeakerFrame() -> Bool {
        defer { speakerSequence = speakerSequence.next }
        let silent = !speakerFrame.contains { $0 != 0 }
        defer { speakerLastWasSilent = silent }
        if silent && speakerLastWasSilent { return false }
        if speakerCount == Self.capacity {
            speakerHead = (speakerHead + 1) % Self.capacity
            speakerCount -= 1
            speakerDropped += 1
        }
        let at = (speakerHead + speakerCount) % Self.capacity
        speakerNumbers[at] = speakerSequence
        for i in 0..<Self.speakerSamples { speakerQueue[at * Self.speakerSamples + i] = speakerFrame[i] }
        speakerCount += 1
        return true
    }

    /// One 48 kHz frame's coil channels into the decimator. True when a block was queued.
    private func pushCoils(left: Int16, right: Int16) -> Bool {
        guard var block = builder.push(left: left, right: right) else { return false }
        let silent = block.isSilent
        defer { lastWasSilent = silent }
        if silent && lastWasSilent { lastQueued = nil; return false }
        if !silent && lastWasSilent { soundBegan = .now; soundReported = false }
        blocks += 1
        let plain = block
        if let last = lastQueued { block.attachPrevious(last) }
        lastQueued = plain
        if count == Self.capacity {
            head = (head + 1) % Self.capacity
            count -= 1
            dropped += 1
        }
        queue[(head + count) % Self.capacity] = block
        count += 1
        return true
    }

    /// When sound began since the last call, once.
    public func takeSoundBegan() -> MonotonicInstant? {
        lock.withLock {
            guard !soundReported else { return nil }
            soundReported = true
            return soundBegan
        }
    }

    /// Hands over the queued blocks and speaker frames (encoded here, on the input path), oldest
    /// first, as wire messages.
    public func drain(into messages: inout [WireMessage]) {
        wake.drain()
        let frames = lock.withLock { () -> Int in
            while count > 0 {
                messages.append(.haptics(queue[head]))
                head = (head + 1) % Self.capacity
                count -= 1
            }
            let frames = speakerCount
            for k in 0..<frames {
                let from = (speakerHead + k) % Self.capacity
                drainingNumbers[k] = speakerNumbers[from]
                for i in 0..<Self.speakerSamples { draining[k * Self.speakerSamples + i] = speakerQueue[from * Self.speakerSamples + i] }
            }
            speakerHead = (speakerHead + frames) % Self.capacity
            speakerCount = 0
            return frames
        }
        guard let encoder else { return }
        for k in 0..<frames {
            let length = draining.withUnsafeBufferPointer { pcm in
                packet.withUnsafeMutableBufferPointer { out in
                    try? encoder.encode(UnsafeBufferPointer(rebasing: pcm[(k * Self.speakerSamples)..<((k + 1) * Self.speakerSamples)]), into: out)
                }
            }
            if let length, let frame = SpeakerFrame(slot: slot, sequence: drainingNumbers[k], packet: Array(packet.prefix(length))) {
                messages.append(.speaker(frame))
            }
        }
    }
}
