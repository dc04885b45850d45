import MonotonicTime
import HIDCodecs
import PadDevices

/// A physical pad's lights and triggers as its family sets them (`PadDriver.lights`), and, where
/// the family has them, its rumble through the same output reports (for a pad whose kernel driver
/// offers no evdev force feedback, or `--rumble-path hidraw`). Opens nothing until first used.
public protocol PadLights: AnyObject {
    func setLightbar(_ color: RGBColor) throws
    func setLightbar(enabled: Bool) throws
    func setPlayerLEDs(_ leds: PlayerLEDs) throws
    func setTriggers(left: TriggerEffect?, right: TriggerEffect?) throws
    /// Whether `reportRumble` gives a sink: the family's output reports carry the motors.
    var rumblesThroughReports: Bool { get }
    /// The family's output reports as a rumble sink, sharing their cumulative state with the lights.
    func reportRumble() throws -> any RumbleSink
    /// Motors to zero through these reports if they carry them (best effort; after another path failed).
    func silenceRumble()
    /// Nothing is written afterwards.
    func close()
    /// When a colour held back (a Bluetooth DualSense's connection animation) is due to be looked
    /// at again: `pump()` then. Nil when nothing waits.
    var deadline: MonotonicInstant? { get }
    func pump() throws
}

extension PadLights {
    public var deadline: MonotonicInstant? { nil }
    public func pump() throws {}
}

/// The kernel's LED class devices (lightbar colour, player LEDs): what a pad whose family has no
/// output reports of padgate's own shows, written in the background where `inBackground` (newest
/// wins: `forward`'s loop must not wait on a driver's round trip to the pad).
public final class KernelClassLights: PadLights {
    let pad: Pad
    let inBackground: Bool
    private var writer: LEDWriter?
    private var closed = false

    public init(pad: Pad, inBackground: Bool) {
        self.pad = pad
        self.inBackground = inBackground
    }

    /// The background writer, where asked for and not closed.
    private var background: LEDWriter? {
        guard inBackground, !closed else { return nil }
        if writer == nil { writer = LEDWriter(pad: pad) }
        return writer
    }

    public func setLightbar(_ color: RGBColor) throws {
        if let background { return background.setColor(color) }
        try LEDClassDevices(pad: pad).setColor(color)
    }

    public func setPlayerLEDs(_ leds: PlayerLEDs) throws {
        if let background { return background.setPlayerMask(leds.mask) }
        try LEDClassDevices(pad: pad).setPlayerMask(leds.mask)
    }

    public func setLightbar(enabled: Bool) throws {
        throw DeviceError.unsupported("\(pad.kind.displayName) pads have no lightbar switch padgate can set")
    }

    public func setTriggers(left: TriggerEffect?, right: TriggerEffect?) throws {
        throw DeviceError.unsupported("\(pad.kind.displayName) pads have no adaptive triggers; they need a DualSense")
    }

    public var rumblesThroughReports: Bool { false }
    public func reportRumble() throws -> any RumbleSink {
        throw DeviceError.unsupported("\(pad.name) has no rumble reports padgate writes; its rumble goes through evdev force feedback")
    }
    public func silenceRumble() {}

    public func close() {
        closed = true
        writer?.close()
        writer = nil
    }
}
