import Feedback
import HIDCodecs
import MonotonicTime
import PadDevices

/// A DualSense's or DualShock 4's lights, player LEDs, triggers and rumble as its own output
/// reports through hidraw, over one cumulative state (`PlayStationOutput`, opened at first use).
public final class PlayStationLights: PadLights {
    let pad: Pad
    let allowBluetoothFullReports: Bool
    let waitForStartupAnimation: Bool
    private var output: PlayStationOutput?
    private var startupAnimationOver = false

    public init(pad: Pad, allowBluetoothFullReports: Bool, waitForStartupAnimation: Bool) {
        self.pad = pad
        self.allowBluetoothFullReports = allowBluetoothFullReports
        self.waitForStartupAnimation = waitForStartupAnimation
    }

    private func opened() throws -> PlayStationOutput {
        if let output { return output }
        let made = try PlayStationOutput(pad: pad, allowBluetoothFullReports: allowBluetoothFullReports)
        output = made
        return made
    }

    /// A colour set while a Bluetooth DualSense may still play its connection animation is held,
    /// never waited for: the forwarding loop that sets it carries every pad of its client (issue 59).
    private var held: (color: RGBColor, since: MonotonicInstant)?
    private var heldDue: MonotonicInstant?
    /// When the pad's own fd was last found empty while a colour was held.
    private var quietSince: MonotonicInstant?

    public func setLightbar(_ color: RGBColor) throws {
        let output = try opened()
        guard output.playsStartupAnimation && waitForStartupAnimation && !startupAnimationOver else { return try output.setLightbar(color) }
        held = (color, held?.since ?? .now)
        try settle(output)
    }

    public var deadline: MonotonicInstant? { held == nil ? nil : heldDue }

    public func pump() throws {
        guard held != nil, let heldDue, heldDue <= .now, let output else { return }
        try settle(output)
    }

    /// SDL's rule: the lightbar takes commands once the pad's sensor clock passes 10.2 M ticks
    /// (1/3 µs each). Reads what the pad sent since, never waiting: a clock short of it holds the
    /// colour until the clock's time is up; a report without one, a pad silent for half a second
    /// (idle and long connected) or 4 s held end the wait.
    private func settle(_ output: PlayStationOutput) throws {
        guard let since = held?.since else { return }
        let now = MonotonicInstant.now
        var newest: [UInt8]?
        while let report = try output.readInput(timeout: .zero) { newest = report }
        var over = now >= since + Self.longestWait
        if let newest {
            quietSince = nil
            if let ticks = DualSenseStartupAnimation.sensorTimestamp(inputReport: newest), ticks < DualSenseStartupAnimation.endsAtSensorTicks {
                let left = Duration.microseconds(Int64((DualSenseStartupAnimation.endsAtSensorTicks - ticks) / 3))
                // Looked at again soon too: the fd keeps only the first 64 reports since the last
                // read (hidraw's ring drops the newest when full), so the newest read may be stale.
                heldDue = min(now + left, now + Self.lookAgain, since + Self.longestWait)
            } else {
                over = true
            }
        } else {
            let quiet = quietSince ?? now
            quietSince = quiet
            if now >= quiet + Self.quietMeansIdle { over = true } else { heldDue = min(quiet + Self.quietMeansIdle, since + Self.longestWait) }
        }
        guard over, let color = held?.color else { return }
        startupAnimationOver = true  // once over, never again: later colours go at once
        held = nil
        heldDue = nil
        try output.setLightbar(color)
    }
    static let longestWait = Duration.seconds(4)
    static let quietMeansIdle = Duration.milliseconds(500)
    static let lookAgain = Duration.milliseconds(100)

    public func setLightbar(enabled: Bool) throws {
        try opened().updateDualSense { $0.lightbarEnabled = enabled }
    }

    public func setPlayerLEDs(_ leds: PlayerLEDs) throws {
        try opened().updateDualSense { $0.playerLEDs = leds }
    }

    public func setTriggers(left: TriggerEffect?, right: TriggerEffect?) throws {
        try opened().updateDualSense {
            if let left { $0.leftTrigger = left }
            if let right { $0.rightTrigger = right }
        }
    }

    public var rumblesThroughReports: Bool { true }
    public func reportRumble() throws -> any RumbleSink { try opened() }
    public func silenceRumble() { (try? opened())?.silence() }

    public func close() {
        output = nil
        held = nil
    }
}
