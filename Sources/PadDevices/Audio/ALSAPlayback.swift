import CAlsa
import Glibc
import MonotonicTime

/// Playback to one ALSA card's first PCM device, as interleaved 16-bit frames at a fixed rate and
/// channel count (no conversion: the pad's own format, or an error that says so). Writes block
/// until the card takes them, which paces the caller. `stop()` drops what is queued, so the card
/// falls silent at once; `finish()` plays it out first.
public final class ALSAPlayback {
    public let device: String
    public let channels: Int
    public let rate: Int
    /// Frames of silence `finish()` writes after the last data: as many as ALSA holds ahead.
    private let tailFrames: Int
    private var pcm: OpaquePointer?

    /// - Parameter latency: what ALSA may buffer ahead (a few periods); more survives a late
    ///   writer, less keeps what plays close to what was written.
    public init(card: Int, channels: Int, rate: Int, latency: Duration) throws {
        device = "hw:\(card),0"
        self.channels = channels
        self.rate = rate
        tailFrames = rate * Int(latency / .microseconds(1)) / 1_000_000
        var handle: OpaquePointer?
        var status = snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, 0)
        guard status >= 0, let handle else { throw Self.error(status, "open \(device)") }
        status = snd_pcm_set_params(handle, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(channels), UInt32(rate),
                                    0, UInt32(latency / .microseconds(1)))
        guard status >= 0 else {
            snd_pcm_close(handle)
            throw Self.error(status, "set \(channels) channels of 16-bit at \(rate) Hz on \(device)")
        }
        pcm = handle
    }

    deinit { stop() }

    /// How long a write keeps waiting for a card whose clock stopped (below).
    static let stallLimit: Duration = .seconds(1)

    /// Times a write found the card's clock stopped and waited on (`write`).
    public private(set) var stalls = 0

    /// Writes whole frames (`samples.count` a multiple of `channels`); an underrun (the writer was
    /// late) is recovered and the write retried once. Returns whether it was: the stream then
    /// restarted, and what was queued before is gone.
    ///
    /// A card that took nothing for its wait time (the larger of 100 ms and 1.1 buffers on recent
    /// kernels, 6.12's among them; 10 s on older ones) fails the write with EIO while its stream
    /// stays running: a device whose clock stalled (a loaded machine, a USB/IP device's thread
    /// held up). The write waits on, up to `stallLimit` in all, rather than end the stream.
    @discardableResult
    public func write(_ samples: UnsafeBufferPointer<Int16>) throws -> Bool {
        guard let pcm, let base = samples.baseAddress else { return false }
        var offset = 0, frames = samples.count / channels, recovered = false
        var stalledSince: MonotonicInstant?
        while frames > 0 {
            let written = snd_pcm_writei(pcm, base + offset * channels, snd_pcm_uframes_t(frames))
            if written == -snd_pcm_sframes_t(EIO) {
                let now = MonotonicInstant.now
                if now - (stalledSince ?? now) < Self.stallLimit {
                    stalledSince = stalledSince ?? now
                    stalls += 1
                    continue
                }
            }
            if written < 0 {
                guard !recovered, snd_pcm_recover(pcm, Int32(written), 1) >= 0 else { throw Self.error(Int32(written), "write to \(device)") }
                recovered = true
                continue
            }
            offset += Int(written)
            frames -= Int(written)
        }
        return recovered
    }

    /// How long until what was written so far has played (zero before the stream starts and
    /// after an underrun): where the next write plays.
    public var queued: Duration {
        guard let pcm else { return .zero }
        var frames: snd_pcm_sframes_t = 0
        guard snd_pcm_delay(pcm, &frames) >= 0, frames > 0 else { return .zero }
        return .microseconds(Int64(frames) * 1_000_000 / Int64(rate))
    }

    /// Plays out what is queued, then closes. A drain ends once the last data is in a USB
    /// transfer, and transfers still queued then are cancelled unsent (measured in the guest with
    /// snd-usb-audio: the last 5 ms), so silence as long as the queue goes last: what was written
    /// arrives whole.
    public func finish() throws {
        let silence = [Int16](repeating: 0, count: tailFrames * channels)
        _ = try silence.withUnsafeBufferPointer { try write($0) }
        guard let pcm else { return }
        snd_pcm_drain(pcm)
        snd_pcm_close(pcm)
        self.pcm = nil
    }

    /// Drops what is queued (silence at once), then closes.
    public func stop() {
        guard let pcm else { return }
        snd_pcm_drop(pcm)
        snd_pcm_close(pcm)
        self.pcm = nil
    }

    static func error(_ status: Int32, _ what: String) -> DeviceError {
        .unsupported("ALSA could not \(what): \(String(cString: snd_strerror(status)))")
    }
}
