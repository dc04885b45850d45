import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadFamilies
import PadSystem
import USBDevice
import XCTest
@testable import PadDevices

/// The DualSense as a real USB device: a USB/IP device on the kernel's vhci-hcd, bound by the
/// kernel's own drivers (usbhid and hid-playstation on its HID interface, snd-usb-audio on its
/// audio interfaces), both children of one USB device, as a wired pad is.
final class USBPadTests: XCTestCase {
    override func setUpWithError() throws {
        try requireDeviceAccess([UHIDDevice.path])
        if let reason = VHCI.unavailableReason() { try skipLoudly(reason) }
    }

    func testAUSBDualSenseIsBoundByHidPlaystationAndSndUSBAudioUnderOneUSBDevice() throws {
        let virtual = try EmulatedPlayStationPad(kind: .dualSense, transport: .usb, idleRepeat: DualSenseDriver().reportCadence)
        defer { virtual.stop() }
        XCTAssertEqual(virtual.bus, .usb)
        let udev = try Udev()
        let pad = try XCTUnwrap(padFor(virtual, udev: udev), "hid-playstation never bound the USB DualSense: \(udev.pads().map(\.name))")
        XCTAssertEqual(pad.bus, .usb)
        XCTAssertEqual(pad.kind, .dualSense)
        XCTAssertEqual(pad.madeByPadgate, "emulated", "the vhci port's mark")
        XCTAssertTrue(pad.id.contains("/vhci_hcd."), pad.id)
        // The HID device hangs off interface 3 of one USB device; its audio interfaces are that
        // device's too, and snd-usb-audio made a card of them with 4 playback channels.
        let usbDevice = try XCTUnwrap(Self.usbDevice(of: pad.id))
        let card = try XCTUnwrap(eventually(timeout: .seconds(20)) { Self.soundCard(under: usbDevice) }, "snd-usb-audio made no card under \(usbDevice)")
        let stream = try String(contentsOfFile: "/proc/asound/\(card)/stream0", encoding: .utf8)
        let playback = try XCTUnwrap(stream.components(separatedBy: "Capture:").first)
        XCTAssertTrue(playback.contains("Channels: 4"), stream)
        XCTAssertTrue(playback.contains("Rates: 48000"), stream)
        XCTAssertTrue(stream.contains("Channels: 2"), "the microphone: \(stream)")
        // Proton's container id comes from the USB device: ids, bus and device number.
        for (file, value) in [("idVendor", "054c"), ("idProduct", "0ce6")] {
            XCTAssertEqual(try String(contentsOfFile: "\(usbDevice)/\(file)", encoding: .ascii).trimmingCharacters(in: .whitespacesAndNewlines), value)
        }
        XCTAssertNotNil(Int((try? String(contentsOfFile: "\(usbDevice)/devnum", encoding: .ascii))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""))

        // Input reaches evdev; the driver's output reaches the pad (lightbar through its LED).
        let reader = try LivePadReader(pad: pad)
        var input = GamepadState.dualSenseAtRest
        input.buttons = [.south, .r1]
        input.leftStick = StickPosition(x: 30, y: 220)
        var seen: LivePadState?
        for _ in 0..<100 where seen == nil {
            try virtual.send(input)
            seen = try waitForState(reader, timeout: .milliseconds(100), expiryIsExpected: true) {
                Set($0.buttons) == ["south", "r1"] && $0.left_stick == [30, 220]
            }
        }
        XCTAssertNotNil(seen, "evdev never showed the fed report: \(reader.snapshot())")
        _ = virtual.takeOutputs()
        try LEDClassDevices(pad: pad).setColor(RGBColor(red: 1, green: 2, blue: 3))
        let lightbar = virtual.waitForOutput(timeout: .seconds(5)) { (try? DualSenseOutputDecoder.decode($0))?.lightbar == RGBColor(red: 1, green: 2, blue: 3) }
        XCTAssertNotNil(lightbar, "the lightbar never reached the pad over the interrupt OUT endpoint")

        // Unplugged: gone when the unplug returns, as a uhid pad is (its drivers let go, its
        // input devices and joystick numbers freed for the next pad), and the port is free.
        virtual.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: usbDevice), "the USB device outlived its unplug")
        XCTAssertFalse(FileManager.default.fileExists(atPath: pad.id), "the HID device outlived its unplug")
        XCTAssertTrue(VHCI.ports().allSatisfy { $0.devid >> 16 != VHCI.Mark.emulated.rawValue }, "a vhci port still holds the pad: \(VHCI.ports().filter { !$0.isFree })")
    }

    /// `lsusb -v` reads the host's pad as it read a real DualSense: every descriptor field, in
    /// order, with its value (nondebug/dualsense's capture; strings aside, which that run could not read).
    func testLsusbShowsTheDescriptorsOfARealDualSense() throws {
        let virtual = try EmulatedPlayStationPad(kind: .dualSense, transport: .usb)
        defer { virtual.stop() }
        _ = try XCTUnwrap(padFor(virtual, udev: try Udev()))
        let ours = try shell("lsusb -v -d 054c:0ce6 2>/dev/null")
        let url = repositoryRoot.appendingPathComponent("Tests/PadDevicesTests/Fixtures/usb/nondebug_dualsense_lsusb-v.txt")
        let theirs = try String(contentsOf: url, encoding: .utf8)
        let fields = Self.descriptorFields(theirs)
        XCTAssertGreaterThan(fields.count, 150)
        XCTAssertEqual(Self.descriptorFields(ours), fields)
    }

    /// The descriptor fields of an `lsusb -v` listing (bLength 18, wTotalLength 0x00e3, …), up to the
    /// HID report descriptor, which the reference run could not read.
    static func descriptorFields(_ listing: String) -> [String] {
        var fields: [String] = []
        for line in listing.split(separator: "\n") {
            if line.contains("Report Descriptor") || line.hasPrefix("Device Status") { break }
            let words = line.split(separator: " ")
            guard words.count >= 2, let name = words.first, name.first.map({ "bwi".contains($0) }) == true,
                  name.dropFirst().first?.isUppercase == true || name.hasPrefix("id") else { continue }
            fields.append("\(name) \(words[1])")
        }
        return fields
    }

    /// What an ALSA program plays into the pad's 4-channel output reaches the device, at the
    /// device's pace (a packet a millisecond, as a real pad takes it): a second of audio takes
    /// about a second and delivers a second's bytes.
    func testPlaybackIntoThePadsCardTakesRealTime() throws {
        let virtual = try EmulatedPlayStationPad(kind: .dualSense, transport: .usb)
        defer { virtual.stop() }
        let pad = try XCTUnwrap(padFor(virtual, udev: try Udev()))
        let usbDevice = try XCTUnwrap(Self.usbDevice(of: pad.id))
        let card = try XCTUnwrap(eventually(timeout: .seconds(20)) { Self.soundCard(under: usbDevice) })
        let device = try XCTUnwrap(virtual.uhid as? USBIPHIDDevice)
        let before = device.audioBytesReceived
        let started = MonotonicInstant.now
        _ = try shell("aplay -q -D plughw:\(card.dropFirst(4)),0 -c 4 -r 48000 -f S16_LE -t raw -d 2 /dev/zero")
        let took = MonotonicInstant.now - started
        let bytes = device.audioBytesReceived - before
        // 2 s of 4 channels × 16 bits at 48 kHz is 768000 bytes; ALSA drains the last period too.
        XCTAssertGreaterThan(bytes, 700_000, "the device took \(bytes) bytes")
        XCTAssertLessThan(bytes, 900_000, "the device took \(bytes) bytes")
        XCTAssertGreaterThan(took, .milliseconds(1800), "2 s of audio played in \(took): the device did not pace it")
    }

    /// A padgate that is killed leaves no vhci port in use: the kernel's end of the socket pair
    /// closes with the process, and vhci-hcd detaches the device.
    func testAKilledEmulatorLeavesNoPortAttached() throws {
        let emulate = try PadgateProcess(["emulate", "dualsense", "--transport", "usb"])
        defer { emulate.interrupt() }
        let udev = try Udev()
        XCTAssertNotNil(eventually(timeout: .seconds(30)) { udev.pads().first { $0.madeByPadgate == "emulated" && $0.bus == .usb && $0.hasItsInputNodes } },
                        "emulate --transport usb made no USB pad")
        XCTAssertTrue(VHCI.ports().contains { $0.devid >> 16 == VHCI.Mark.emulated.rawValue })
        kill(emulate.process.processIdentifier, SIGKILL)
        emulate.process.waitUntilExit()
        XCTAssertNotNil(eventually(timeout: .seconds(10)) { VHCI.ports().allSatisfy { $0.devid >> 16 != VHCI.Mark.emulated.rawValue } ? true : nil },
                        "a killed padgate left its port attached: \(VHCI.ports().filter { !$0.isFree })")
        XCTAssertNotNil(eventually(timeout: .seconds(10)) { udev.pads().contains { $0.madeByPadgate == "emulated" } ? nil : true })
    }

    /// The USB device a HID device's syspath runs through (`…/usbB/B-P/B-P:1.3/0003:…`).
    static func usbDevice(of hidSyspath: String) -> String? {
        let parts = hidSyspath.split(separator: "/", omittingEmptySubsequences: false)
        guard let interface = parts.firstIndex(where: { $0.contains(":1.") }) else { return nil }
        return parts[..<interface].joined(separator: "/")
    }

    /// The ALSA card ("card0") whose device is an interface of `usbDevice`.
    static func soundCard(under usbDevice: String) -> String? {
        let cards = ((try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/sound")) ?? []).filter { $0.hasPrefix("card") }
        return cards.first { card in
            let device = URL(fileURLWithPath: "/sys/class/sound/\(card)/device").resolvingSymlinksInPath().path
            return device.hasPrefix(usbDevice + "/")
        }
    }
}
