import Feedback
import Foundation
import HIDCodecs
import Logging
import MonotonicTime
import PadDevices
import PadSystem
import WireProtocol

/// The host's haptics stream on a Switch Pro's HD rumble: its two linear actuators take a
/// frequency and an amplitude per band, so each side gets the coil signal's loudness
/// (`HapticsEnvelope`) at the signal's own frequency, on the band nearer it. Written as rumble-only
/// reports (0x10) through hidraw beside hid-nintendo, on a cadence of its own:
///
/// - every 30 ms while a level is held (SDL's `RUMBLE_WRITE_FREQUENCY_MS`: faster can drop a
///   Bluetooth pad; the pad stops by itself when no report renews it, SDL renews every 50 ms);
/// - each block's level holds for the envelope's lease (50 ms), so a dead link stops it;
/// - the end of a stream, and `close()`, write the neutral frame three times, as hid-nintendo
///   ends its own rumble with several zero-amplitude reports;
/// - the game's rumble wins (`sharesTheRumbleActuators`): blocks are not taken while it plays.
public final class SwitchProHaptics: HapticsOutput, @unchecked Sendable {
    static let interval: Duration = .milliseconds(30)
    static let neutralReports = 3
    /// Tones below the geometric middle of the actuator's resting frequencies (160 and 320 Hz)
    /// go on the low band, the others on the high band.
    static let bandSplit = 226.0

    public let path: String
    /// Guards everything below it.
    private let lock = NSLock()
    private var envelope = HapticsEnvelope()
    private var held: (levels: MotorLevels, frequencies: (left: Double, right: Double), until: MonotonicInstant)?
    private var running = false
    private var stopping = false
    private var thread: JoinableThread?
    private let log = Logger(label: "padgate.feedback.switch-haptics")

    public init(hidraw path: String) { self.path = path }
    deinit { close() }

    public var sharesTheRumbleActuators: Bool { true }

    /// What the envelope counted.
    public var counters: HapticsEnvelope.Counters { lock.withLock { envelope.counters } }

    public func receive(_ block: HapticsBlock, at now: MonotonicInstant) {
        let start = lock.withLock { () -> Bool in
            guard !stopping else { return false }
            guard let motors = block.withSamples({ envelope.receive(sequence: block.sequence.rawValue, samples: $0, at: now) }) else { return false }
            held = (motors.levels, envelope.frequencies, motors.until)
            guard !running, !motors.levels.isSilent else { return false }
            running = true
            return true
        }
        guard start else { return }
        thread?.join()
        thread = JoinableThread { [self] in ThreadPriority.raisedForInput { play() } }
    }

    public func close() {
        lock.withLock { stopping = true }
        thread?.join()
        thread = nil
    }

    /// One side's bands for a level and a frequency (none found: the low band's resting one).
    static func side(level: UInt8, frequency: Double) -> SwitchHDRumble.Side {
        let amplitude = Double(level) / 255
        let hz = frequency > 0 ? frequency : SwitchHDRumble.defaultLowFrequency
        return hz < bandSplit ? .init(lowFrequency: hz, lowAmplitude: amplitude) : .init(highFrequency: hz, highAmplitude: amplitude)
    }

    /// The rumble-only report for a held level (nil: neutral), numbered with `counter`.
    static func report(_ held: (levels: MotorLevels, frequencies: (left: Double, right: Double))?, counter: UInt8) -> [UInt8] {
        let frame = held.map {
            SwitchHDRumble.frame(left: side(level: $0.levels.low, frequency: $0.frequencies.left),
                                 right: side(level: $0.levels.high, frequency: $0.frequencies.right))
        } ?? SwitchHDRumble.frame(left: .neutral, right: .neutral)
        var report = [UInt8](repeating: 0, count: SwitchProReports.length)
        report[0] = SwitchProReports.rumbleOutputID
        report[1] = counter & 0x0F
        report.replaceSubrange(2..<10, with: frame)
        return report
    }

    private func play() {
        var counter: UInt8 = 0
        do {
            let device = try HIDRawDevice(path: path)
            let timer = try PeriodicTimer(interval: Self.interval)
            var wait = PollSet<Bool>()
            wait.add(timer.descriptor, true)
            func write(_ report: [UInt8]) throws {
                try device.write(report)
                counter &+= 1
                wait.wait(timeout: Self.interval * 2) { _, _ in }
                _ = timer.takeExpirations()
            }
            while true {
                let now = MonotonicInstant.now
                let current = lock.withLock { () -> (levels: MotorLevels, frequencies: (left: Double, right: Double))? in
                    guard !stopping, let held, now < held.until, !held.levels.isSilent else { return nil }
                    return (held.levels, held.frequencies)
                }
                guard let current else {
                    for _ in 0..<Self.neutralReports { try write(Self.report(nil, counter: counter)) }
                    // A block that came while the neutral reports went out starts the next stream here.
                    let again = lock.withLock { () -> Bool in
                        if !stopping, let held, MonotonicInstant.now < held.until, !held.levels.isSilent { return true }
                        running = false
                        return false
                    }
                    if again { continue }
                    return
                }
                try write(Self.report(current, counter: counter))
            }
        } catch {
            log.warning("the Switch Pro's HD rumble stopped, and takes no more haptics this session: \(error)")
            lock.withLock { stopping = true; running = false }
        }
    }
}
