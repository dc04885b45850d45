import ArgumentParser
import Foundation
import HIDCodecs
import Logging
import MonotonicTime
import PadDevices
import PadFamilies
import PadSystem

struct EmulateCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "emulate",
        abstract: "Create a virtual controller and print what is sent to it.",
        discussion: """
            dualsense: made through /dev/uhid with the real report descriptor. The kernel binds its real \
            driver (hid-playstation), so it shows up like a plugged-in DualSense: evdev nodes, a hidraw \
            node, LEDs, rumble. Input is held neutral, played from a script, or replayed from a \
            hid-recorder file; every output report sent to the pad is printed, decoded.
            xbox, gamepad: an evdev-only pad made through /dev/uinput (Xbox 360 ids, or pid.codes' test \
            ids for a generic gamepad), held neutral; every rumble effect a program uploads and plays is \
            printed. Needs write access to /dev/uhid or /dev/uinput (udev/70-padgate.rules).
            """)

    enum Device: String, ExpressibleByArgument, CaseIterable { case dualsense, xbox, gamepad }

    @Argument(help: ArgumentHelp("The controller to emulate: dualsense (uhid, real hid-playstation driver), xbox or gamepad (uinput, evdev only).",
                            valueName: "model"))
    var device: Device

    @Option(help: "Bus to present: bt (the default: SDL's HIDAPI driver opens it with gyro, touchpad and lights) or usb. With --replay, the recording's own bus.")
    var bus: PadBus?

    @Option(help: "How the kernel sees the pad: uhid (the default) or usb (a real USB device on vhci-hcd, with the pad's audio function; needs --bus usb and vhci-hcd).")
    var transport: EmulatedPlayStationPad.Transport = .uhid

    @Option(help: "A script of inputs to play (see docs/emulate-script.md).")
    var script: String?

    @Option(help: "A hid-recorder file whose input reports to replay with their timing.")
    var replay: String?

    @Flag(help: "With --replay: play the recording again and again (until --duration or Ctrl-C), instead of once and then a pad at rest.")
    var loop = false

    @Option(parsing: .unconditional, help: "Exit after this many seconds (default: run until interrupted).", transform: SecondsOption.parse)
    var duration: Double?

    @Flag(help: "Print output reports as JSON lines.")
    var json = false

    func validate() throws {
        if script != nil && replay != nil { throw ValidationError("use either --script or --replay, not both") }
        if loop && replay == nil { throw ValidationError("--loop repeats a --replay recording; a --script loops with its own 'repeat'") }
        if transport == .usb && (device != .dualsense || (bus ?? .usb) != .usb) {
            throw ValidationError("--transport usb makes a USB DualSense: with dualsense and --bus usb")
        }
        if device != .dualsense && (script != nil || replay != nil) {
            throw ValidationError("--script and --replay drive an emulated DualSense; the \(device.rawValue) pad is held neutral")
        }
    }

    func run() throws {
        if device != .dualsense { return try runUInputPad() }
        // The input is read first: a typo in a file name should not cost a pad plug and unplug.
        let bus = transport == .usb ? .usb : try self.bus ?? replay.map(InputFeeder.recordingBus) ?? EmulatedPlayStationPad.busPresentedToGames
        let source = try InputFeeder.Source(bus: bus, script: script, replay: replay, loop: loop)
        let started = MonotonicInstant.now, json = json
        let pad = try EmulatedPlayStationPad(bus: bus, transport: transport, idleRepeat: EmulatedPlayStationPad.idleReportInterval) { report in
            OutputPrinter.print(report, json: json, since: started)
        }
        SignalTrap.install { pad.stop() }
        guard pad.waitUntilOpened() else {
            pad.stop()
            throw DeviceError.unsupported("the kernel did not bind a driver to the virtual DualSense within 10 s: is hid-playstation available (sudo modprobe hid-playstation)?")
        }
        console.info("padgate: virtual DualSense (\(bus.shortName)\(transport == .usb ? ", a USB device on vhci-hcd" : ""), \(pad.uniq)) is up; Ctrl-C unplugs it")

        let feeder = InputFeeder(pad: pad, source: source)
        let deadline = duration.map { started + SecondsOption.duration($0) }
        try feeder.run(until: deadline, stop: { SignalTrap.fired })
        pad.stop()
    }
}
extension EmulateCommand {
    /// An evdev-only pad: present until the deadline or a signal. Rumble uploads are answered (or the
    /// uploading program would block for the kernel's 30 s) and printed.
    func runUInputPad() throws {
        let pad = try UInputGamepad(identity: device == .xbox ? .xbox360 : .generic)
        let rumble = UInputRumbleReceiver(uinput: pad.descriptor)
        SignalTrap.install {}
        let started = MonotonicInstant.now
        console.info("padgate: \(pad.name) is up at \(pad.devnode ?? "a new /dev/input node"); Ctrl-C unplugs it")
        let deadline = duration.map { started + SecondsOption.duration($0) }
        while !SignalTrap.fired {
            if let deadline, MonotonicInstant.now >= deadline { break }
            _ = Poll.wait([pad.descriptor, SignalTrap.descriptor], timeout: deadline.map { $0 - MonotonicInstant.now })
            for event in try rumble.service() {
                OutputPrinter.print(event, json: json, since: started)
            }
        }
    }
}

