import HIDCodecs
import PadDevices
import PadSystem
import WireProtocol

/// The DualSense and DualSense Edge (hid-playstation; SDL_hidapi_ps5.c). The host shows them as
/// themselves, as USB devices with their audio function where vhci-hcd allows.
public struct DualSenseDriver: PadDriver {
    public init() {}
    public func lights(for pad: Pad, options: PadFeedback.Options) -> any PadLights {
        PlayStationLights(pad: pad, allowBluetoothFullReports: options.allowBluetoothFullReports,
                          waitForStartupAnimation: options.waitForStartupAnimation)
    }
    public var kinds: [PadKind] { [.dualSense, .dualSenseEdge] }
    public var readsThroughHidraw: Bool { true }
    public func inputCodec(for kind: PadKind, descriptor: ReportDescriptor?) -> (any PadInputCodec)? {
        kind == .dualSenseEdge ? PlayStationInputCodec.dualSenseEdge : PlayStationInputCodec.dualSense
    }
    /// Every 4 ms, over USB and Bluetooth alike, idle or not.
    public var reportCadence: Duration? { .milliseconds(4) }

    /// Its calibration (feature 0x05) and firmware (0x20) reports, as hid-playstation reads them at probe.
    public func identity(of pad: Pad, hidraw: HIDRawDevice?) -> (calibration: MotionCalibration, wire: PadIdentity) {
        var wire = PadIdentity()
        var calibration = MotionCalibration.nominal
        guard let device = hidraw else { return (calibration, wire) }
        let calibrationReport = calibrationReport(bus: pad.bus ?? .usb)!
        if let report = try? device.featureReport(calibrationReport.id, length: calibrationReport.length), let parsed = try? CalibrationParser.dualSense(report) {
            calibration = parsed.calibration
            wire.calibration = FeatureReportBytes(report) ?? .init()
        }
        if let report = try? device.featureReport(0x20, length: 64) { wire.firmware = FeatureReportBytes(report) ?? .init() }
        return (calibration, wire)
    }

    public func calibrationReport(bus: PadBus) -> (id: UInt8, length: Int)? { (0x05, 41) }

    public func parseCalibration(_ report: [UInt8], convention: CalibrationConvention, bus: PadBus?) throws(CalibrationError) -> CalibrationResult {
        try CalibrationParser.dualSense(report, convention: convention, bus: bus)
    }

    public func hostPad(for arrival: PadArrival, transport: VirtualPadTransport) throws -> (any VirtualPad)? {
        try PlayStationVirtualPad(arrival: arrival, presenting: arrival.type, transport: transport)
    }

    public var presentsAsUSBDevice: Bool { true }

    /// The voice coils: the pad's own sound card over USB, report 0x32 over Bluetooth.
    public func hapticsOutput(for pad: Pad) throws -> (any HapticsOutput)? {
        if pad.bus == .usb {
            guard let card = try Udev().soundCard(of: pad) else {
                throw DeviceError.unsupported("\(pad.name) is on USB but has no sound card for its voice coils: is snd-usb-audio loaded (sudo modprobe snd-usb-audio)?")
            }
            return DualSenseCoils(output: .usb(card: card))
        }
        guard let hidraw = pad.hidraw else { throw DeviceError.unsupported("\(pad.name) has no hidraw node for its voice coils' reports") }
        return DualSenseCoils(output: .bluetooth(hidraw: hidraw))
    }

    /// Over USB its card's channels 0-1 (the headphone jack, else the speaker); over Bluetooth
    /// report 0x36 (the speaker).
    public func playsSpeaker(_ pad: Pad) -> Bool { pad.bus == .usb || pad.hidraw != nil }

    public func hasMicrophone(_ pad: Pad) -> Bool { pad.bus == .usb }

    /// Over USB its card's capture; over Bluetooth the pad sends no microphone padgate reads.
    public func microphoneInput(for pad: Pad, wake: WakePipe) throws -> (any MicrophoneInput)? {
        guard pad.bus == .usb else { return nil }
        guard let card = try Udev().soundCard(of: pad) else {
            throw DeviceError.unsupported("\(pad.name) is on USB but has no sound card for its microphone: is snd-usb-audio loaded (sudo modprobe snd-usb-audio)?")
        }
        return DualSenseMicrophone(card: card, wake: wake)
    }

    public var emulatedModels: [EmulatedModel] {
        [EmulatedModel(name: "dualsense", kind: .dualSense, playsScripts: true),
         EmulatedModel(name: PadKind.dualSenseEdge.name, kind: .dualSenseEdge, playsScripts: true)]
    }

    public func emulate(_ model: EmulatedModel, bus: PadBus, transport: VirtualPadTransport,
                        onOutput: (@Sendable ([UInt8]) -> Void)?) throws -> any EmulatedPad {
        try EmulatedPlayStationPad(kind: model.kind, bus: bus, transport: transport, idleRepeat: reportCadence, onOutput: onOutput)
    }

    public func describeOutput(_ report: [UInt8]) -> String {
        do { return try DualSenseOutputDecoder.decode(report).summary } catch { return "undecodable: \(error)" }
    }
}
