import PadDevices
import Foundation
import HIDCodecs
import MonotonicTime
import PadSystem

/// A DualSense, DualSense Edge or DualShock 4 made through /dev/uhid. The real kernel driver
/// (hid-playstation; hid-sony for the DualShock 4 on a 6.1 kernel) binds to it and gives it real
/// evdev nodes, a hidraw node, LEDs and force feedback, so it is both the device tests' fixture
/// and the host's way to present a PlayStation pad to games. Each kind answers with its own
/// descriptor and feature reports (`PlayStationPadProfile`).
///
/// A pump thread answers the driver's probe-time GET_REPORTs and collects every output report.
// Sendable: what the pump and the senders share is behind `sending` or the channel's own lock.
public final class EmulatedPlayStationPad: @unchecked Sendable {
    /// How padgate presents a DualSense to games (`emulate`, the host's virtual pad): SDL 2's
    /// hidapi drops a USB-bus hidraw node with no USB device above it, which a uhid pad never
    /// has, so SDL would fall back to evdev without gyro, touchpad or lights. A Bluetooth-bus
    /// pad is opened by SDL's HIDAPI driver with all of them (docs/virtual-pads.md).
    public static let busPresentedToGames = PadBus.bluetooth

    /// A real DualSense reports every few milliseconds whether or not anything changed, and SDL's
    /// HIDAPI driver relies on it: a Bluetooth pad that sends nothing within 16 ms of being opened
    /// is taken for one in simple mode, whose firmware SDL never reads (so it halves every rumble)
    /// and whose touchpad and sensors appear only later. Pads shown to games (`emulate`, the
    /// host's virtual pad) therefore repeat their last report at this interval when idle: the
    /// pad's own USB polling interval (its HID IN endpoint's bInterval 6 at high speed, 4 ms),
    /// which leaves SDL's 16 ms three chances even when a loaded machine delays a repeat.

    public let bus: PadBus
    public let transport: VirtualPadTransport
    public let macAddress: [UInt8]
    let uhid: any HIDDeviceEnd
    /// Package-visible for the device tests' `waitForOutput`.
    package let channel: UHIDPadChannel
    private var encoder: PlayStationInputEncoder
    private var sequence: UInt8 = 0
    /// Readable whenever output reports are waiting in `takeOutputs()`, so a poll(2) loop can
    /// wait for them; `takeOutputs()` drains it.
    public var outputReadyDescriptor: FileDescriptor { channel.outputReadyDescriptor }
    /// Called on the pump thread for every output report the kernel or a program sends.
    public let onOutput: (@Sendable ([UInt8]) -> Void)?
    /// True once the driver has opened the device (hid_hw_open at the end of its probe).
    public var opened: Bool { channel.opened }

    /// nil: reports go out only when sent (tests that count them); else the idle repeat interval.
    public let idleRepeat: Duration?
    /// Guards `encoder`, `sequence`, `lastReport`, `lastState` and `lastSent`: the pump repeats reports too.
    private let sending = NSLock()
    private var lastReport: [UInt8]
    /// The state behind `lastReport`, nil when that was raw bytes (a replay): repeated with its
    /// sensor clock moved on, as a real pad's keeps running.
    private var lastState: GamepadState? = .dualSenseAtRest
    private var lastSent = MonotonicInstant.now

    public var uniq: String { UHIDPadChannel.uniq(of: macAddress) }

    /// The calibration feature report as the pad answers it: a DualSense's 0x05; a DualShock 4's
    /// 0x05 in its Bluetooth form (the USB form, 0x02, is derived from it). Over Bluetooth the CRC
    /// is stamped over the last 4 bytes.
    public let calibration: [UInt8]
    /// A DualSense's feature report 0x20 (build date, hardware and firmware versions; SDL reads
    /// the update version), a DualShock 4's 0xa3.
    public let firmwareInfo: [UInt8]
    /// DualSense, DualSense Edge (its own product id, paddles and Fn buttons in bits a plain
    /// DualSense leaves clear) or DualShock 4.
    public let kind: PadKind
    let profile: PlayStationPadProfile

    /// The names real pads give themselves over USB (hid-playstation and SDL match on ids, not names).
    public static func defaultName(_ kind: PadKind) -> String {
        switch kind {
        case .dualSenseEdge: "Sony Interactive Entertainment DualSense Edge Wireless Controller"
        case .dualShock4: "Sony Interactive Entertainment Wireless Controller"
        default: "Sony Interactive Entertainment DualSense Wireless Controller"
        }
    }

    /// The calibration and firmware reports a pad of `kind` answers with when given none.
    public static func defaultIdentity(_ kind: PadKind) -> (calibration: [UInt8], firmwareInfo: [UInt8]) {
        kind == .dualShock4 ? (DualShock4IdentityData.bluetoothCalibration, DualShock4IdentityData.versionInfo)
                            : (DualSenseIdentityData.calibration, DualSenseIdentityData.firmwareInfo)
    }

    /// - Parameter macAddress: the pad's address; hid-playstation refuses a second pad with the same
    ///   one, so each emulated pad gets a random locally administered address unless given one.
    /// - Parameter calibration: the IMU calibration the driver reads at probe (41 bytes, id 0x05;
    ///   nil: the kind's default).
    /// - Parameter firmwareInfo: feature report 0x20 (64 bytes) of a DualSense, 0xa3 (49 bytes) of a
    ///   DualShock 4; nil: the kind's default.
    /// - Parameter transport: `.usb` makes a DualSense or Edge a USB device on vhci-hcd (its bus
    ///   is then USB, and `phys` says only whether it is the host's pad or an emulated one).
    /// - Parameter onOutput: called on the pump thread for every output report, from the first.
    /// - Parameter onAudioOut: a USB pad's audio output as the host played it (4 channels of 16-bit
    ///   little-endian at 48 kHz: headphones or speaker on 0-1, the voice coils on 2-3), packet
    ///   by packet, on the USB device's thread, the buffer valid during the call only.
    /// - Parameter onAudioIn: fills a USB pad's microphone packets (2 channels of 16-bit at 48 kHz,
    ///   1 ms each) as the host takes them, on the USB device's thread; nil: silence.
    public init(kind: PadKind = .dualSense, bus: PadBus = busPresentedToGames, transport: VirtualPadTransport = .uhid, name: String? = nil,
                macAddress: [UInt8]? = nil, phys: String = PadPhys.emulated,
                calibration: [UInt8]? = nil, firmwareInfo: [UInt8]? = nil,
                idleRepeat: Duration? = nil, onOutput: (@Sendable ([UInt8]) -> Void)? = nil,
                onAudioOut: (@Sendable (UnsafeRawBufferPointer) -> Void)? = nil,
                onAudioIn: (@Sendable (UnsafeMutableRawBufferPointer) -> Void)? = nil) throws {
        let bus = transport == .usb ? PadBus.usb : bus
        guard let profile = PlayStationPadProfile(kind: kind, bus: bus), let ids = kind.canonicalIDs else {
            throw DeviceError.unsupported("a virtual PlayStation pad cannot be a \(kind.displayName)")
        }
        self.transport = transport
        self.kind = kind
        self.profile = profile
        self.bus = bus
        self.idleRepeat = idleRepeat
        self.onOutput = onOutput
        self.calibration = calibration ?? Self.defaultIdentity(kind).calibration
        self.firmwareInfo = firmwareInfo ?? Self.defaultIdentity(kind).firmwareInfo
        self.macAddress = macAddress ?? UHIDPadChannel.randomMAC()
        encoder = PlayStationInputEncoder(layout: profile.layout)
        lastReport = encoder.encode(.dualSenseAtRest)
        switch transport {
        case .uhid: uhid = try UHIDDevice()
        case .usb:
            guard let usb = DualSenseUSBDescriptors.descriptors(kind) else {
                throw DeviceError.unsupported("a USB \(kind.displayName) cannot be made: padgate has a DualSense's and an Edge's USB descriptors")
            }
            uhid = try USBIPHIDDevice(descriptors: usb, audioUnits: DualSenseUSBDescriptors.audioUnits,
                                      mark: phys.hasPrefix(PadPhys.hostVirtual) ? .host : .emulated, onAudioOut: onAudioOut, onAudioIn: onAudioIn)
        }
        channel = UHIDPadChannel(uhid)
        let identity = UHIDDevice.Identity(
            name: name ?? Self.defaultName(kind), phys: phys, uniq: uniq,
            bus: bus, vendorID: ids.vendor, productID: ids.product, version: bus == .usb ? 0x8111 : Self.bluetoothVersion)
        try channel.start("padgate-uhid", pump: { [weak self] in self?.pump() }, creating: identity, descriptor: profile.descriptor)
    }

    /// Microseconds as this pad's sensor clock ticks.

    /// Unplugs the pad. Its nodes disappear; the driver sees a removal.
    public func stop() { channel.stop() }

    /// A real DualSense (and DualShock 4) over Bluetooth has HID version 0x0100; hid-playstation
    /// (and hid-sony) set bit 15 on top (0x8100), the version SDL's mapping database knows for the
    /// pad under that driver.
    /// Another version would take SDL's evdev path to an older mapping with the face buttons moved.
    static let bluetoothVersion: UInt32 = 0x0100

    /// Feeds one input report, as the pad would send it.
    public func send(_ report: [UInt8]) throws {
        try sending.withLock {
            try uhid.input(report)
            lastReport = report
            lastState = nil
            lastSent = .now
        }
    }

    /// Feeds `state` as the pad's next input report (USB 0x01 or Bluetooth 0x31 with its CRC).
    public func send(_ state: GamepadState) throws {
        try sending.withLock { try sendLocked(state) }
    }

    private func sendLocked(_ state: GamepadState) throws {
        var state = state
        state.sequence = sequence
        sequence &+= 1
        // Encoded in place: the host writes every forwarded report through here, without allocating.
        if lastReport.count != encoder.layout.length { lastReport = [UInt8](repeating: 0, count: encoder.layout.length) }
        lastReport.withUnsafeMutableBytes { encoder.encode(state, into: $0) }
        try uhid.input(lastReport)
        lastState = state
        lastSent = .now
    }

    /// When the pump must repeat the last report; nil if it never does.
    private func idleRepeatDue() -> MonotonicInstant? {
        guard let idleRepeat, channel.opened else { return nil }
        return sending.withLock { lastSent } + idleRepeat
    }

    private func repeatIfIdle() {
        guard let due = idleRepeatDue(), MonotonicInstant.now >= due else { return }
        sending.withLock {
            let now = MonotonicInstant.now
            if var state = lastState {
                let micros = (now - lastSent) / .microseconds(1)
                state.sensorTimestamp &+= profile.sensorTicks(micros: UInt32(clamping: Int(micros)))
                try? sendLocked(state)
            } else {
                try? uhid.input(lastReport)
                lastSent = now
            }
        }
    }

    /// Every output report received so far (and clears the list).
    public func takeOutputs() -> [[UInt8]] { channel.takeOutputs() }

    /// Waits for the driver's probe to finish (it opens the device last).
    public func waitUntilOpened(timeout: Duration = .seconds(10)) -> Bool { channel.waitUntilOpened(timeout: timeout) }

    /// At input priority, as a real pad's own controller runs: it takes the driver's output
    /// reports as they come and keeps its report clock on a busy machine (a host pad's game then
    /// hears its feedback on time, and a test reads the pad's outputs in the order and at the
    /// time they were written, not in a backlog).
    private func pump() { ThreadPriority.raisedForInput { channel.pump(due: idleRepeatDue, tick: repeatIfIdle, handle: handle) } }

    private func handle(_ event: UHIDEvent) {
        switch event {
        case .getReport(let id, let number, _):
            channel.replyGetReport(id, with: featureReport(number))
        case .output(let report, _):
            onOutput?(report)
            channel.append(report)
        case .open, .close, .start, .stop, .setReport, .other: break  // the channel answers SET_REPORT
        }
    }

    /// The feature reports the driver and SDL read at probe; nil for the others, which the pad
    /// refuses (as a Bluetooth DualShock 4 refuses 0x12, the USB serial SDL tells the bus by).
    func featureReport(_ number: UInt8) -> [UInt8]? {
        profile.featureReport(number, calibration: calibration, firmwareInfo: firmwareInfo, macAddress: macAddress)
    }
}

extension EmulatedPlayStationPad: EmulatedPad {
    public var summary: String {
        "virtual \(kind.displayName) (\(bus.shortName)\(transport == .usb ? ", a USB device on vhci-hcd" : ""), \(uniq))"
    }
}
