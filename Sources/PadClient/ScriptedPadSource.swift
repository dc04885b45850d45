import Feedback
import Foundation
import HIDCodecs
import MonotonicTime
import PadDevices
import PadFamilies
import PadSystem
import WireProtocol

/// A physical pad that exists only in this process, for machines without uhid (the demo) and for
/// benchmarks: a DualSense whose input follows an `InputScript`. Each frame is encoded as the
/// pad's real USB input report and decoded by the same codec a live pad goes through; feedback is
/// rendered by the same rumble renderer and output encoder, into the output reports the pad would
/// receive, which are kept for display and tests.
public final class ScriptedPadSource: PadSource {
    public let arrival: PadArrival
    private var player: InputScriptPlayer
    private var scripted = GamepadState.dualSenseAtRest
    private let encoder = PlayStationInputEncoder(layout: PlayStationLayouts.dualSenseUSB())
    @exclusivity(unchecked) private var input: DecodedReportInput
    private var report = [UInt8](repeating: 0, count: 64)
    private let timer: PeriodicTimer
    private let reportInterval: Duration
    private let started = MonotonicInstant.now
    public var controls: PadStateSnapshot { input.controls }
    public var touch: TouchSnapshot { input.touch }
    public var battery: BatteryReport? { input.battery }

    private var renderer: RumbleRenderer
    private var output = DualSenseOutputState()
    private var outputEncoder = DualSenseOutputEncoder()
    /// What the pad shows after every output report it was sent (decoded back from the bytes).
    public private(set) var shown = DualSenseOutputState()
    public private(set) var outputReports = 0

    /// `reportInterval`: how often the pad reports (a real DualSense: every 4 ms over USB).
    public init(script: InputScript, slot: PadSlot, reportInterval: Duration = .milliseconds(8),
                renderer configuration: RumbleRenderer.Configuration = .init()) throws {
        player = InputScriptPlayer(script)
        self.reportInterval = reportInterval
        renderer = RumbleRenderer(configuration: configuration)
        let calibration = (try? CalibrationParser.dualSense(DualSenseIdentityData.calibration).calibration) ?? .nominal
        input = DecodedReportInput(decoder: ControllerInputDecoder(PlayStationInputCodec.dualSense), slot: slot, calibration: calibration)
        let ids = PadKind.dualSense.canonicalIDs!
        arrival = PadArrival(slot: slot, type: .dualSense, vendorID: ids.vendor, productID: ids.product,
                             capabilities: [.analogTriggers, .rumble, .touchpad, .accelerometer, .gyro, .battery, .rgbLED, .playerLEDs, .adaptiveTriggers],
                             name: "padgate scripted DualSense (in-process)")
        timer = try PeriodicTimer(interval: reportInterval)
    }

    public var descriptors: [FileDescriptor] { [timer.descriptor] }

    public func readInput() throws -> Bool {
        guard timer.takeExpirations() > 0 else { return false }
        player.advance(to: MonotonicInstant.now - started, &scripted)
        scripted.sensorTimestamp &+= UInt32(reportInterval / .microseconds(1)) &* 3  // the pad counts 1/3 µs
        try ingest(report: encodedReport())
        return true
    }

    private func encodedReport() -> [UInt8] {
        report.withUnsafeMutableBytes { encoder.encode(scripted, into: $0) }
        return report
    }

    /// One input report through the codec, as if read from the pad's hidraw node.
    public func ingest(report: [UInt8]) throws {
        guard report.withUnsafeBytes({ input.ingest($0) }) else {
            throw DeviceError.unsupported("the scripted pad's own report did not decode")
        }
    }


    public func takeMotion(_ body: (WireMotionSample) -> Void) { input.takeMotion(body) }

    private var now: MonotonicInstant { .now }

    public func apply(_ lease: RumbleLease) throws {
        renderer.receive(RumbleMessage(lease), at: now)
        try pumpFeedback()
    }

    public func apply(_ message: HIDOutputMessage) throws {
        if let color = message.lightbarColor { output.lightbar = color }
        if let leds = message.playerLEDs { output.playerLEDs = leds }
        if message.fields.contains(.micLED) { output.micLED = MicLED(rawValue: message.micLED) }
        if let effect = message.leftTriggerEffect { output.leftTrigger = effect }
        if let effect = message.rightTriggerEffect { output.rightTrigger = effect }
        try writeOutput()
    }

    public var feedbackDeadline: MonotonicInstant? { renderer.nextDeadline }

    public func pumpFeedback() throws {
        for action in renderer.step(now: now) {
            switch action {
            case .play(let levels, _): output.rumble = levels
            case .stop: output.rumble = .silent
            }
            try writeOutput()
        }
    }

    public func silence() {
        for _ in renderer.shutdown() {}
        renderer = RumbleRenderer(configuration: renderer.configuration)
        output.rumble = .silent
        try? writeOutput()
    }

    /// Encodes the cumulative state as the USB output report the pad would get, and decodes it
    /// back: what the display shows is what the bytes say.
    private func writeOutput() throws {
        let bytes = try outputEncoder.encode(output, bus: .usb)
        guard !DualSenseOutputEncoder.flagsNothing(bytes), let sent = try? DualSenseOutputDecoder.decode(bytes) else { return }
        sent.apply(to: &shown)
        outputReports += 1
    }
}
