import Feedback
import HIDCodecs
import Logging
import MonotonicTime
import PadDevices
import PadSystem
import WireProtocol

/// Everything padgate does differently for one family of pads, asked through one type, as SDL's
/// `SDL_hidapi_*.c` drivers and the kernel's per-device tables are: the ids it owns (its `PadKind`
/// rows), what the client reads from the physical pad, what the host shows games, what `padgate
/// emulate` makes, and how a game's output report reads. Adding a family is a folder beside the
/// others and a line in `PadDrivers.all`.
public protocol PadDriver: Sendable {
    /// The `PadKind` rows (vendor and product ids) this driver owns.
    var kinds: [PadKind] { get }

    /// The products whose hidraw and evdev nodes padgate opens, by vendor and product: the udev
    /// rules grant them to the logged-in user (`UdevRules`). By default the kinds' table rows that
    /// name a product; a family whose vendor-wide row would open other devices (Microsoft's
    /// keyboards and mice) lists its own.
    var openedProducts: [(vendor: UInt16, product: UInt16)] { get }
    /// Why the rules grant `openedProducts`, for the rules file's comment (nil: the kinds' names say it).
    var openedProductsNote: String? { get }

    /// Client: the physical pad's motion calibration and the identity reports the host's pad will
    /// answer games with, read once at open. `hidraw` is the open node when the pad is read
    /// through it, nil when through evdev. A pad that does not answer gets nominal values.
    func identity(of pad: Pad, hidraw: HIDRawDevice?) -> (calibration: MotionCalibration, wire: PadIdentity)

    /// Host: the pad games see for a forwarded one of this family, as itself (uhid, or a USB
    /// device on vhci-hcd where `transport` is `.usb` and the family has one); nil when the family
    /// has no pad of its own to show (the host then shows an Xbox 360 pad).
    func hostPad(for arrival: PadArrival, transport: VirtualPadTransport) throws -> (any VirtualPad)?

    /// Host: the ways a pad of this family can be shown, the default first (`serve --show
    /// KIND=STYLE`); empty: one way, `hostPad(for:transport:)`'s.
    var hostStyles: [HostStyle] { get }

    /// Host: the pad games see in `style`, one of `hostStyles` (the default: `hostPad(for:transport:)`).
    func hostPad(for arrival: PadArrival, transport: VirtualPadTransport, style: HostStyle) throws -> (any VirtualPad)?

    /// Whether the host can show this family as a real USB device (with its audio function).
    var presentsAsUSBDevice: Bool { get }

    /// How often the real pad sends an input report while nothing changes (nil: only on a
    /// change). The family's emulated and host pads keep it, so kernel drivers and games that
    /// pace on a pad's reports (hid-nintendo sends rumble only between them, from 6.2 on) see a
    /// live pad.
    var reportCadence: Duration? { get }

    /// Host: how a pad of this family shows its player number (`PlayerSlots`) when the game has
    /// not set its lights: a player-LED mask (the wire's, as a DualSense's five LEDs), a lightbar
    /// colour, or both.
    func playerLights(_ number: Int) -> (mask: UInt8?, color: RGBColor?)

    /// Client: the codec that reads this family's raw input reports (nil: none; the pad is read
    /// through evdev). `descriptor` is the pad's report descriptor, for a family whose layout it
    /// gives (`decodesThroughDescriptor`).
    func inputCodec(for kind: PadKind, descriptor: ReportDescriptor?) -> (any PadInputCodec)?

    /// Client: whether `inputCodec` needs the pad's report descriptor (read from its hidraw node).
    var decodesThroughDescriptor: Bool { get }

    /// Client: whether `forward` reads the pad through its hidraw node with `inputCodec` (every bit
    /// the pad sends), rather than evdev (where the kernel's driver has done a handshake or a
    /// calibration padgate would otherwise repeat).
    var readsThroughHidraw: Bool { get }

    /// Client: how lights, player LEDs, triggers and (where evdev has no force feedback) rumble
    /// reach the physical pad; opens nothing until used.
    func lights(for pad: Pad, options: PadFeedback.Options) -> any PadLights

    /// Client: the family's own rumble report through hidraw, preferred to evdev force feedback
    /// where it reaches more (nil: evdev force feedback, then `output`).
    func ownRumbleSink(for pad: Pad) -> (any RumbleSink)?
    /// Client: how long the pad's motors hold a level by themselves, where its hardware stops
    /// them (nil: until told otherwise); the renderer re-sends within it.
    var rumbleHold: Duration? { get }
    /// Client: where the host's haptics stream plays on the pad (its voice coils), made when a
    /// session starts or at its first block; nil: the family has none (docs/haptics.md).
    func hapticsOutput(for pad: Pad) throws -> (any HapticsOutput)?

    /// Client: where the host's trackpad pulses play on the pad (a Steam Deck's pads), made at the
    /// first; nil: the family has no trackpad that pulses.
    func trackpadPulses(for pad: Pad) throws -> (any TrackpadPulseOutput)?

    /// Client: whether the pad plays the host pad's speaker pair (its own speaker or headphone jack),
    /// through its `hapticsOutput`: the client then asks the host for it.
    func playsSpeaker(_ pad: Pad) -> Bool

    /// Client: the pad's microphone, recorded for the host while it asks (nil: none, or not
    /// through padgate); `wake` is woken when frames wait.
    func microphoneInput(for pad: Pad, wake: WakePipe) throws -> (any MicrophoneInput)?
    /// Client: whether `microphoneInput` makes one for the pad (the client then offers it).
    func hasMicrophone(_ pad: Pad) -> Bool

    /// Client: what `forward` says of how it reads such a pad, when that is not the obvious.
    func readingNote(for pad: Pad) -> String?
    /// Client: feature reports a pad read through hidraw needs while it is read (nil: none).
    func hidrawUpkeep(for pad: Pad) -> HidrawUpkeep?

    /// `padgate calibrate`: the feature report holding the pad's factory motion calibration on
    /// `bus` (its id and length, as the kernel's driver reads it at probe); nil: none.
    func calibrationReport(bus: PadBus) -> (id: UInt8, length: Int)?

    /// `padgate calibrate`: that report read under `convention` (`bus` nil: as the report says).
    func parseCalibration(_ report: [UInt8], convention: CalibrationConvention, bus: PadBus?) throws(CalibrationError) -> CalibrationResult

    /// `padgate emulate`: the models this driver makes, by the name the command takes.
    var emulatedModels: [EmulatedModel] { get }

    /// `padgate emulate`: makes a pad of `model` the kernel binds its real driver to.
    func emulate(_ model: EmulatedModel, bus: PadBus, transport: VirtualPadTransport,
                 onOutput: (@Sendable ([UInt8]) -> Void)?) throws -> any EmulatedPad

    /// `padgate emulate`: one line for what an output report a program wrote to the pad means.
    func describeOutput(_ report: [UInt8]) -> String
}

/// Feature reports sent to a pad read through hidraw: once as it is opened (and as a controller
/// comes onto a receiver's slot), then again every `every` while it is read (a Steam Controller's
/// lizard mode off, which it drops on its own about 8 s after the last).
public struct HidrawUpkeep: Sendable {
    public var atOpen: [[UInt8]]
    public var repeating: [[UInt8]]
    public var every: Duration
    /// What the pad does when the repeating reports stop reaching it, for the warning then.
    public var lapse: String
    public init(atOpen: [[UInt8]], repeating: [[UInt8]], every: Duration, lapse: String) {
        self.atOpen = atOpen; self.repeating = repeating; self.every = every; self.lapse = lapse
    }
}

/// A model `padgate emulate` makes: its name on the command line and the kind it is.
public struct EmulatedModel: Sendable, Hashable {
    public let name: String
    public let kind: PadKind
    /// Whether it is made through uhid (a HID device the kernel's own driver binds) rather than uinput.
    public let throughUHID: Bool
    /// Whether its input can be played from a script or a recording, and it can be a USB device
    /// (`emulate --script`, `--replay`, `--transport usb`); the others are held at rest.
    public let playsScripts: Bool
    public init(name: String, kind: PadKind, throughUHID: Bool = true, playsScripts: Bool = false) {
        self.name = name
        self.kind = kind
        self.throughUHID = throughUHID
        self.playsScripts = playsScripts
    }
}

/// A pad `padgate emulate` made: present until stopped; what programs write to it is queued (or
/// handed to `onOutput`).
public protocol EmulatedPad: AnyObject, Sendable {
    /// How the pad is named and addressed (its uniq, or its node), for the one line `emulate` prints.
    var summary: String { get }
    /// Readable while `takeOutputs` has a report.
    var outputReadyDescriptor: FileDescriptor { get }
    func waitUntilOpened(timeout: Duration) -> Bool
    func takeOutputs() -> [[UInt8]]
    func stop()
}

/// A physical pad's haptics actuators, playing the host's stream (`HapticsBlock`s) at their own
/// pace; silent after `close()`.
public protocol HapticsOutput: AnyObject {
    func receive(_ block: HapticsBlock, at now: MonotonicInstant)
    func close()
    /// Whether it plays on the actuators the game's rumble uses: then the rumble wins, and blocks
    /// are not given to it while the rumble plays (docs/feedback.md).
    var sharesTheRumbleActuators: Bool { get }
    /// A frame of the host pad's speaker pair, where the driver `playsSpeaker`.
    func receive(_ frame: SpeakerFrame, at now: MonotonicInstant)
    /// The link's jitter as its pings measure it: what a playout starts with before it has
    /// measured a stream of its own.
    func observeLink(jitter: Duration)
    /// A session that may play haptics is up: an output whose stream costs time to start (a USB
    /// card's) starts it now on silence, so no burst waits for it; `close()` ends it.
    func open()
}

extension HapticsOutput {
    public var sharesTheRumbleActuators: Bool { false }
    public func receive(_ frame: SpeakerFrame, at now: MonotonicInstant) {}
    public func observeLink(jitter: Duration) {}
    public func open() {}
}

/// A physical pad's trackpads, playing the host's pulse trains (`TrackpadPulse`): each is finite
/// (at most `TrackpadPulse.maximumMillis`), so nothing is left to stop on exit.
public protocol TrackpadPulseOutput: AnyObject {
    func play(_ pulse: TrackpadPulse) throws
}

/// A physical pad's microphone, recorded for the host only while its request's lease lasts
/// (`MicrophoneRequest`): a lost stop or a dead host never leaves it recording.
public protocol MicrophoneInput: AnyObject {
    func apply(_ request: MicrophoneRequest, at now: MonotonicInstant)
    /// Hands over the recorded frames, oldest first.
    func take(_ body: (WireMessage) -> Void)
    /// Stops recording; nothing more is recorded.
    func close()
}

/// A way the host can show a family's pads (`serve --show KIND=STYLE`): its name on the command
/// line and what games then see.
public struct HostStyle: Sendable, Hashable {
    public let name: String
    public let summary: String
    public init(name: String, summary: String) { self.name = name; self.summary = summary }
}

extension PadDriver {
    public var openedProducts: [(vendor: UInt16, product: UInt16)] {
        kinds.flatMap(\.ids).compactMap { row in row.product.map { (row.vendor, $0) } }
    }
    public var openedProductsNote: String? { nil }
    public var hostStyles: [HostStyle] { [] }
    public func hostPad(for arrival: PadArrival, transport: VirtualPadTransport, style: HostStyle) throws -> (any VirtualPad)? {
        try hostPad(for: arrival, transport: transport)
    }
    public var presentsAsUSBDevice: Bool { false }
    public var reportCadence: Duration? { nil }
    /// The kernel's and dualsensectl's patterns for players 1 to 7, then round again.
    public func playerLights(_ number: Int) -> (mask: UInt8?, color: RGBColor?) {
        let patterns = PlayerLEDs.playerPatterns
        return (patterns[1 + (max(number, 1) - 1) % (patterns.count - 1)], nil)
    }
    /// The kernel's LED class devices; no triggers, no rumble reports.
    public func lights(for pad: Pad, options: PadFeedback.Options) -> any PadLights {
        KernelClassLights(pad: pad, inBackground: options.lightsInBackground)
    }
    public func inputCodec(for kind: PadKind, descriptor: ReportDescriptor?) -> (any PadInputCodec)? { nil }
    public var decodesThroughDescriptor: Bool { false }
    public var readsThroughHidraw: Bool { false }
    public func ownRumbleSink(for pad: Pad) -> (any RumbleSink)? { nil }
    public var rumbleHold: Duration? { nil }
    public func hapticsOutput(for pad: Pad) throws -> (any HapticsOutput)? { nil }
    public func trackpadPulses(for pad: Pad) throws -> (any TrackpadPulseOutput)? { nil }
    public func playsSpeaker(_ pad: Pad) -> Bool { false }
    public func microphoneInput(for pad: Pad, wake: WakePipe) throws -> (any MicrophoneInput)? { nil }
    public func hasMicrophone(_ pad: Pad) -> Bool { false }
    public func calibrationReport(bus: PadBus) -> (id: UInt8, length: Int)? { nil }
    public func readingNote(for pad: Pad) -> String? { nil }
    public func hidrawUpkeep(for pad: Pad) -> HidrawUpkeep? { nil }
    public func parseCalibration(_ report: [UInt8], convention: CalibrationConvention, bus: PadBus?) throws(CalibrationError) -> CalibrationResult {
        throw .unexpectedReportID(report.first ?? 0, expected: [])
    }
    public var emulatedModels: [EmulatedModel] { [] }
    public func emulate(_ model: EmulatedModel, bus: PadBus, transport: VirtualPadTransport,
                        onOutput: (@Sendable ([UInt8]) -> Void)?) throws -> any EmulatedPad {
        throw DeviceError.unsupported("padgate cannot emulate a \(model.name)")
    }
    public func describeOutput(_ report: [UInt8]) -> String { "" }
}

/// The registry: one line per family. A kind no driver claims is the generic evdev pad's.
public enum PadDrivers {
    public static let all: [any PadDriver] = [
        DualSenseDriver(),
        DualShock4Driver(),
        SwitchProDriver(),
        XboxBluetoothDriver(),
        SteamDeckDriver(),
        SteamControllerDriver(),
        GenericEvdevDriver(),
    ]

    public static func driver(for kind: PadKind) -> any PadDriver {
        all.first { $0.kinds.contains(kind) } ?? GenericEvdevDriver()
    }

    /// The codec each kind's driver reads its reports with (`inspect`, `calibrate FILE.hid`).
    public static let inputCodec: InputCodecCatalogue = { kind, descriptor in driver(for: kind).inputCodec(for: kind, descriptor: descriptor) }

    /// Every model `padgate emulate` takes, in the registry's order.
    public static var emulatedModels: [EmulatedModel] { all.flatMap(\.emulatedModels) }

    public static func emulatedModel(named name: String) -> (model: EmulatedModel, driver: any PadDriver)? {
        for driver in all { if let model = driver.emulatedModels.first(where: { $0.name == name }) { return (model, driver) } }
        return nil
    }
}
