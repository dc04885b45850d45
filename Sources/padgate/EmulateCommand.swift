import ArgumentParser
import Foundation
import HIDCodecs
import PadDevices

struct EmulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulate",
        abstract: "Create a virtual controller through /dev/uhid and print what is sent to it.",
        discussion: """
            The kernel binds its real driver (hid-playstation) to the virtual pad, so it shows up like a \
            plugged-in DualSense: evdev nodes, a hidraw node, LEDs, rumble. Input is held neutral, played \
            from a script, or replayed from a hid-recorder file; every output report sent to the pad is \
            printed. Needs write access to /dev/uhid (sudo modprobe uhid; udev/70-padgate.rules).
            """)

    enum Model: String, ExpressibleByArgument, CaseIterable { case dualsense, xbox }

    @Argument(help: "The controller to emulate: dualsense (uhid, real hid-playstation driver) or xbox (uinput, evdev only).")
    var model: Model

    @Option(help: "Bus to present: usb or bt.")
    var bus: VirtualDualSense.Bus = .usb

    @Option(help: "A script of inputs to play (see docs/emulate-script.md).")
    var script: String?

    @Option(help: "A hid-recorder file whose input reports to replay with their timing.")
    var replay: String?

    @Option(help: "Exit after this many seconds (default: run until interrupted).")
    var duration: Double?

    @Flag(help: "Print output reports as JSON lines.")
    var json = false

    func validate() throws {
        if script != nil && replay != nil { throw ValidationError("use either --script or --replay, not both") }
        if model == .xbox && (script != nil || replay != nil) {
            throw ValidationError("--script and --replay drive an emulated DualSense; the xbox pad is held neutral")
        }
    }

    func run() throws {
        if model == .xbox { return try runUInputPad() }
        let pad = try VirtualDualSense(bus: bus)
        let started = ContinuousClock.now
        pad.onOutput = { report in OutputPrinter.print(report, bus: bus, json: json, since: started) }
        SignalTrap.install { pad.stop() }
        guard pad.waitUntilOpened() else {
            pad.stop()
            throw DeviceError.unsupported("the kernel did not bind a driver to the virtual DualSense within 10 s: is hid-playstation available (sudo modprobe hid-playstation)?")
        }
        note("padgate: virtual DualSense (\(bus.rawValue), \(pad.uniq)) is up; Ctrl-C unplugs it")

        let feeder = try InputFeeder(pad: pad, bus: bus, script: script, replay: replay)
        let deadline = duration.map { started + .milliseconds(Int($0 * 1000)) }
        try feeder.run(until: deadline, stop: { SignalTrap.fired })
        pad.stop()
    }
}
extension EmulateCommand {
    /// A generic evdev pad: present until the deadline or a signal, every node real.
    func runUInputPad() throws {
        let pad = try UInputGamepad()
        SignalTrap.install {}
        note("padgate: virtual Xbox 360 pad is up at \(pad.devnode ?? "a new /dev/input node"); Ctrl-C unplugs it")
        let deadline = duration.map { ContinuousClock.now + .milliseconds(Int($0 * 1000)) }
        while !SignalTrap.fired {
            if let deadline, ContinuousClock.now >= deadline { break }
            _ = Poll.wait([pad.fileDescriptor], timeout: .milliseconds(200))
        }
    }
}

extension VirtualDualSense.Bus: ExpressibleByArgument {}
