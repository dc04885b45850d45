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
            dualsense, dualsense-edge, dualshock4, switch-pro, xbox-one: made through /dev/uhid with the \
            pad's real report descriptor and identity reports. The kernel binds its real driver \
            (hid-playstation or hid-sony, hid-nintendo, hid-microsoft), so it shows up like a \
            plugged-in pad: evdev nodes, a hidraw node, LEDs, rumble. A DualSense's input is held \
            neutral, played from a script, or replayed from a hid-recorder file; the others are held \
            neutral. Every output report a program sends to the pad is printed, decoded.
            xbox, gamepad: an evdev-only pad made through /dev/uinput (Xbox 360 ids, or pid.codes' test \
            ids for a generic gamepad), held neutral; every rumble effect a program uploads and plays is \
            printed. Needs write access to /dev/uhid or /dev/uinput (udev/70-padgate.rules).
            """)

    /// A model name from the registry (`PadDrivers.emulatedModels`).
    struct Model: ExpressibleByArgument {
        let model: EmulatedModel
        let driver: any PadDriver
        init?(argument: String) {
            guard let found = PadDrivers.emulatedModel(named: argument) else { return nil }
            (model, driver) = found
        }
        static var allValueStrings: [String] { PadDrivers.emulatedModels.map(\.name) }
        /// One line for a wrong name (the parser's own message lists every value on a line of its own).
        static func parse(_ text: String) throws -> Model {
            guard let model = Model(argument: text) else {
                throw ValidationError("'\(text)' is invalid for <model>: the models are \(allValueStrings.joined(separator: ", "))")
            }
            return model
        }
            }

    @Argument(help: ArgumentHelp("The controller to emulate: \(Model.allValueStrings.joined(separator: ", ")).", valueName: "model"),
              completion: .list(Model.allValueStrings), transform: Model.parse)
    var device: Model

    @Option(help: "Bus to present: bt (the default: SDL's HIDAPI driver opens it with gyro, touchpad and lights) or usb. With --replay, the recording's own bus.")
    var bus: PadBus?

    @Option(help: "How the kernel sees the pad: uhid (the default) or usb (a real USB device on vhci-hcd, with the pad's audio function; needs --bus usb and vhci-hcd).")
    var transport: VirtualPadTransport = .uhid

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
        if transport == .usb && (!device.model.playsScripts || (bus ?? .usb) != .usb) {
            throw ValidationError("--transport usb makes a USB DualSense: with dualsense (or dualsense-edge) and --bus usb")
        }
        if !device.model.playsScripts && (script != nil || replay != nil) {
            throw ValidationError("--script and --replay drive an emulated DualSense; the \(device.model.name) pad is held neutral")
        }
    }

    func run() throws {
        guard device.model.throughUHID else { return try runUInputPad() }
        // The input is read first: a typo in a file name should not cost a pad plug and unplug.
        let bus = transport == .usb ? .usb : try self.bus ?? replay.map(InputFeeder.recordingBus) ?? EmulatedPlayStationPad.busPresentedToGames
        let source = try device.model.playsScripts ? InputFeeder.Source(bus: bus, script: script, replay: replay, loop: loop) : nil
        let started = MonotonicInstant.now, json = json, driver = device.driver
        let pad = try driver.emulate(device.model, bus: bus, transport: transport) { report in
            OutputPrinter.print(report, describedBy: driver, json: json, since: started)
        }
        SignalTrap.install { pad.stop() }
        guard pad.waitUntilOpened(timeout: .seconds(10)) else {
            pad.stop()
            throw DeviceError.unsupported("the kernel did not bind a driver to the \(pad.summary) within 10 s: is its driver available (sudo modprobe hid-playstation hid-nintendo hid-microsoft)?")
        }
        console.info("padgate: \(pad.summary) is up; Ctrl-C unplugs it")
        let deadline = duration.map { started + SecondsOption.duration($0) }
        if let source, let playStation = pad as? EmulatedPlayStationPad {
            try InputFeeder(pad: playStation, source: source).run(until: deadline, stop: { SignalTrap.fired })
        } else {
            // Held neutral by the pad itself; the reports programs write are printed as they come.
            while !SignalTrap.fired {
                if let deadline, MonotonicInstant.now >= deadline { break }
                _ = Poll.wait([pad.outputReadyDescriptor, SignalTrap.descriptor], timeout: deadline.map { $0 - MonotonicInstant.now })
                for report in pad.takeOutputs() { OutputPrinter.print(report, describedBy: driver, json: json, since: started) }
            }
        }
        pad.stop()
    }
}
extension EmulateCommand {
    /// An evdev-only pad: present until the deadline or a signal. Rumble uploads are answered (or the
    /// uploading program would block for the kernel's 30 s) and printed.
    func runUInputPad() throws {
        let pad = try UInputGamepad(identity: device.model.name == "xbox" ? .xbox360 : .generic)
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

