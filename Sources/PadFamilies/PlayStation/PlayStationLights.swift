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

    public func setLightbar(_ color: RGBColor) throws {
        let output = try opened()
        if output.playsStartupAnimation && waitForStartupAnimation && !startupAnimationOver {
            try Self.waitForStartupAnimation(output)
            startupAnimationOver = true  // once over, never again: later colours go at once
        }
        try output.setLightbar(color)
    }

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

    public func close() { output = nil }

    /// SDL's rule: the lightbar takes commands once the pad's sensor clock passes 10.2 M ticks. A pad
    /// that sends nothing for half a second is idle and long connected; proceed.
    private static func waitForStartupAnimation(_ output: PlayStationOutput) throws {
        let deadline = MonotonicInstant.now + .seconds(4)
        while MonotonicInstant.now < deadline {
            guard let report = try output.readInput(timeout: .milliseconds(500)) else { return }
            if DualSenseStartupAnimation.isOver(inputReport: report) != false { return }
        }
    }
}
