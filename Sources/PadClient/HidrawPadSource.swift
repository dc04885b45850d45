import Feedback
import Foundation
import Logging
import HIDCodecs
import MonotonicTime
import PadDevices
import PadFamilies
import PadSystem
import WireProtocol

/// A physical pad read from its hidraw node through hidapi and decoded by the typed decoder:
/// every bit the pad sends (Edge paddles and Fn buttons, battery, touch at the pad's resolution,
/// raw motion with the pad's own clock), none of it filtered by a kernel driver's evdev mapping.
/// Motion is calibrated here with the pad's own calibration report, which also travels to the
/// host so its virtual pad computes the same physical units (docs/virtual-pads.md). Feedback goes
/// out through `PadFeedback`, as for evdev pads.
public final class HidrawPadSource: PhysicalPadSource {
    public let arrival: PadArrival
    public let pad: Pad
    let device: HIDRawDevice
    let descriptor: FileDescriptor
    /// The pad's evdev nodes, held while it is forwarded (nil: `forward --shared`).
    public let grab: EvdevGrab?
    /// Touched only by the forwarding thread, on every report: no runtime exclusivity check.
    @exclusivity(unchecked) private var input: DecodedReportInput
    public let sessionFeedback: SessionFeedback
    /// One report at a time; hidraw hands out whole reports, 78 bytes at most for these pads.
    @exclusivity(unchecked) private var report = [UInt8](repeating: 0, count: 128)
    /// The family's feature reports while the pad is read (`PadDriver.hidrawUpkeep`), next due then.
    private let upkeep: HidrawUpkeep?
    private var upkeepDue: MonotonicInstant?
    /// Upkeep writes that failed (the pad may fall back to a mode padgate does not read).
    public private(set) var failedUpkeeps = 0
    private static let log = Logger(label: "padgate.client")

    /// A receiver's slot (a Steam Controller puck's): a pad while a controller is on it, its
    /// state coming (it sends one every 4 ms; a controller switched off may say nothing first).
    private let receiverSlot: Bool
    private var lastStateAt: MonotonicInstant?
    private var lastSequence: UInt8?
    static let absence = Duration.seconds(1)
    public var present: Bool {
        guard receiverSlot else { return true }
        guard input.decoded.link == .connected, let lastStateAt else { return false }
        return MonotonicInstant.now - lastStateAt < Self.absence
    }
    public var controls: PadStateSnapshot { input.controls }
    public var touch: TouchSnapshot { input.touch }
    public var battery: BatteryReport? { input.battery }
    public var motionCorrection: MotionCorrection? { input.motionCorrection }
    public var gyroCalibration: GyroCalibrationMode { input.gyroCorrection.mode }
    /// Reports the decoder refused (bad CRC, cut short): dropped and counted.
    public var rejectedReports: Int { input.rejectedReports }

    /// Whether a pad is read this way: it has a hidraw node and its driver reads it there.
    public static func reads(_ pad: Pad) -> Bool {
        pad.hidraw != nil && PadDrivers.driver(for: pad.kind).readsThroughHidraw
    }

    /// As `forward` opens a pad: the gyro calibrated as `gyroCalibration` says, from the bias stored for its serial.
    public convenience init(pad: Pad, slot: PadSlot, options: PadFeedback.Options = .init(), gyroCalibration: GyroCalibrationMode = .continuous,
                            exclusive: Bool = false) throws {
        try self.init(pad: pad, slot: slot, options: options,
                      motionCorrection: gyroCalibration == .off ? nil : MotionCorrectionStore.forwardingCorrection(for: pad), gyroCalibration: gyroCalibration,
                      exclusive: exclusive)
    }

    /// `motionCorrection` applied as `gyroCalibration` says (by default, as given: no continuous estimate).
    /// `exclusive`: the pad's evdev nodes are held for this source alone while it lives (`EvdevGrab`).
    public init(pad: Pad, slot: PadSlot, options: PadFeedback.Options = .init(), motionCorrection: MotionCorrection?,
                gyroCalibration: GyroCalibrationMode = .stored, exclusive: Bool = false) throws {
        let driver = PadDrivers.driver(for: pad.kind)
        guard let path = pad.hidraw, driver.readsThroughHidraw,
              let codec = driver.inputCodec(for: pad.kind, descriptor: driver.decodesThroughDescriptor ? try Self.descriptor(hidraw: path) : nil) else {
            throw DeviceError.unsupported("\(pad.name) has no hidraw node with a decoder padgate knows; read it through evdev")
        }
        self.pad = pad
        grab = exclusive ? try EvdevGrab(pad) : nil
        device = try HIDRawDevice(path: path)
        descriptor = try device.pollDescriptor()
        try device.setNonBlocking()
        let identity = driver.identity(of: pad, hidraw: device)
        input = DecodedReportInput(decoder: ControllerInputDecoder(codec), slot: slot, calibration: identity.calibration, motionCorrection: motionCorrection,
                                   gyroCalibration: gyroCalibration)
        sessionFeedback = SessionFeedback(pad: pad, options: options)
        receiverSlot = pad.kind.isReceiver(product: pad.productID)
        upkeep = driver.hidrawUpkeep(for: pad)
        arrival = PadArrival(slot: slot, type: pad.kind, vendorID: pad.vendorID, productID: pad.productID,
                             capabilities: pad.wireCapabilities(offeringMicrophone: options.offersMicrophone), name: pad.name, identity: identity.wire.withUnit(of: pad))
        if upkeep != nil {
            do {
                try startUpkeep()
            } catch where receiverSlot {
                failedUpkeeps += 1  // an empty slot may refuse them: sent again when a controller comes
            } catch {
                throw DeviceError.unsupported("\(pad.name) refused the settings padgate reads it with (\(error)); is another program holding it?")
            }
        }
    }

    /// The report descriptor of a pad read through it.
    static func descriptor(hidraw path: String) throws -> ReportDescriptor {
        do {
            return try ReportDescriptor(bytes: HIDRawDevice.reportDescriptor(hidrawPath: path))
        } catch let error as DescriptorError {
            throw DeviceError.unsupported("\(path)'s report descriptor does not parse (\(error)); read the pad through evdev")
        }
    }

    public var descriptors: [FileDescriptor] { [descriptor] }

    public func readInput() throws -> Bool {
        var framed = false
        let wasPresent = present
        defer {
            // A controller that came onto a receiver's slot gets the settings it is read with
            // (it may have come back from being switched off with its defaults).
            if receiverSlot && !wasPresent && present { try? startUpkeep() }
        }
        while true {
            // The forwarding loop polled the descriptor: read(2) alone, no second poll per report.
            let n = try report.withUnsafeMutableBufferPointer { try device.readQueued(into: $0) }
            guard n > 0 else { return framed }
            if report.withUnsafeBytes({ input.ingest(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }) {
                framed = true
                if receiverSlot && input.decoded.sequence != lastSequence {
                    lastSequence = input.decoded.sequence
                    lastStateAt = .now
                }
            }
        }
    }

    /// The family's settings as the pad is opened (or a controller comes onto its slot); the
    /// repeating ones from then on.
    private func startUpkeep() throws {
        guard let upkeep else { return }
        upkeepDue = .now + upkeep.every
        for report in upkeep.atOpen { try device.sendFeatureReport(report) }
    }

    public func takeMotion(_ body: (WireMotionSample) -> Void) { input.takeMotion(body) }

    public var feedbackDeadline: MonotonicInstant? {
        // A present slot's absence deadline wakes the loop to say the controller left.
        var due = sessionFeedback.deadline
        func consider(_ other: MonotonicInstant?) {
            guard let other else { return }
            if let current = due, current <= other { return }
            due = other
        }
        consider(upkeepDue)
        if receiverSlot && present { consider(lastStateAt.map { $0 + Self.absence }) }
        return due
    }

    public func pumpFeedback() throws {
        if let upkeep, let due = upkeepDue, due <= .now {
            upkeepDue = .now + upkeep.every
            for report in upkeep.repeating {
                do { try device.sendFeatureReport(report) } catch {
                    failedUpkeeps += 1
                    if failedUpkeeps == 1 { Self.log.warning("\(pad.name): its settings could not be renewed (\(error)); \(upkeep.lapse) (said once)") }
                }
            }
        }
        try sessionFeedback.pump()
    }
}
