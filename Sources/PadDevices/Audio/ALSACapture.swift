import CAlsa
import Glibc

/// Capture from one ALSA card's first PCM device, as interleaved 16-bit frames at a fixed rate and
/// channel count (the pad's own format, or an error that says so). Reads block until the card has
/// the frames, which paces the caller; an overrun (the reader was late) is recovered and counted.
///
/// A capture's buffer adds no delay (a read returns as soon as a period is in), so it is deep:
/// a reader held up by a busy machine, or a device that delivers several milliseconds at once,
/// does not overrun it. The period is short, so each read wakes as soon as its frames are in.
public final class ALSACapture {
    public let device: String
    public let channels: Int
    public let rate: Int
    public private(set) var overruns = 0
    /// What the card gave: frames a period and in the buffer.
    public private(set) var periodFrames = 0
    public private(set) var bufferFrames = 0
    private var pcm: OpaquePointer?

    /// - Parameters:
    ///   - period: how much one wake of the reader takes (its latency step).
    ///   - buffer: how late a reader may be before frames are lost.
    public init(card: Int, channels: Int, rate: Int, period: Duration, buffer: Duration) throws {
        device = "hw:\(card),0"
        self.channels = channels
        self.rate = rate
        var handle: OpaquePointer?
        var status = snd_pcm_open(&handle, device, SND_PCM_STREAM_CAPTURE, 0)
        guard status >= 0, let handle else { throw ALSAPlayback.error(status, "open \(device) for capture") }
        var step = "capture \(channels) channels of 16-bit at \(rate) Hz from \(device)"
        var hardware: OpaquePointer?
        status = snd_pcm_hw_params_malloc(&hardware)
        if status >= 0, let hardware {
            defer { snd_pcm_hw_params_free(hardware) }
            var periodTime = UInt32(period / .microseconds(1)), bufferTime = UInt32(buffer / .microseconds(1))
            var direction: Int32 = 0
            status = snd_pcm_hw_params_any(handle, hardware)
            if status >= 0 { status = snd_pcm_hw_params_set_access(handle, hardware, SND_PCM_ACCESS_RW_INTERLEAVED) }
            if status >= 0 { status = snd_pcm_hw_params_set_format(handle, hardware, SND_PCM_FORMAT_S16_LE) }
            if status >= 0 { status = snd_pcm_hw_params_set_channels(handle, hardware, UInt32(channels)) }
            if status >= 0 { status = snd_pcm_hw_params_set_rate(handle, hardware, UInt32(rate), 0) }
            if status >= 0 { step = "a capture period of \(period) and a buffer of \(buffer) on \(device)" }
            if status >= 0 { status = snd_pcm_hw_params_set_period_time_near(handle, hardware, &periodTime, &direction) }
            if status >= 0 { status = snd_pcm_hw_params_set_buffer_time_near(handle, hardware, &bufferTime, &direction) }
            if status >= 0 { status = snd_pcm_hw_params(handle, hardware) }
        }
        guard status >= 0 else {
            snd_pcm_close(handle)
            throw ALSAPlayback.error(status, step)
        }
        // A capture starts by default once a buffer's worth is asked for; a reader of one period
        // at a time would wait forever (the kernel says EIO after 100 ms). Start at the first
        // read, also after an overrun's recovery (`read` starts it itself before it waits).
        var software: OpaquePointer?
        status = snd_pcm_sw_params_malloc(&software)
        if status >= 0, let software {
            defer { snd_pcm_sw_params_free(software) }
            status = snd_pcm_sw_params_current(handle, software)
            if status >= 0 { status = snd_pcm_sw_params_set_start_threshold(handle, software, 1) }
            if status >= 0 { status = snd_pcm_sw_params(handle, software) }
        }
        guard status >= 0 else {
            snd_pcm_close(handle)
            throw ALSAPlayback.error(status, "start capturing from \(device) at the first read")
        }
        var bufferSize: snd_pcm_uframes_t = 0, periodSize: snd_pcm_uframes_t = 0
        if snd_pcm_get_params(handle, &bufferSize, &periodSize) >= 0 { (bufferFrames, periodFrames) = (Int(bufferSize), Int(periodSize)) }
        pcm = handle
    }

    deinit { stop() }

    /// How long one wait for frames lasts before `read` asks whether to go on.
    static let waitStep: Int32 = 50

    /// Fills `samples` with whole frames (`samples.count` a multiple of `channels`), waiting in
    /// steps of 50 ms while `keepGoing` says so; false when it said stop first (`samples` then
    /// partly filled). An overrun is recovered (what it lost is lost) and counted; an error
    /// recovery cannot mend is thrown.
    public func read(into samples: UnsafeMutableBufferPointer<Int16>, while keepGoing: () -> Bool = { true }) throws -> Bool {
        guard let pcm, let base = samples.baseAddress else { return false }
        var offset = 0, frames = samples.count / channels
        while frames > 0 {
            // A wait does not start a capture (a read would): prepared, at the start and after an
            // overrun's recovery, it is started here.
            if snd_pcm_state(pcm) == SND_PCM_STATE_PREPARED { _ = snd_pcm_start(pcm) }
            let ready = snd_pcm_wait(pcm, Self.waitStep)
            if ready == 0 {
                guard keepGoing() else { return false }
                continue
            }
            // A wait that failed (an overrun) is recovered by the read below, which fails the same way.
            let read = snd_pcm_readi(pcm, base + offset * channels, snd_pcm_uframes_t(frames))
            if read == -Int(EAGAIN) { continue }
            if read < 0 {
                guard snd_pcm_recover(pcm, Int32(read), 1) >= 0 else { throw ALSAPlayback.error(Int32(read), "read from \(device)") }
                overruns += 1
                continue
            }
            offset += Int(read)
            frames -= Int(read)
        }
        return true
    }

    /// Stops capturing and closes.
    public func stop() {
        guard let pcm else { return }
        snd_pcm_drop(pcm)
        snd_pcm_close(pcm)
        self.pcm = nil
    }
}
