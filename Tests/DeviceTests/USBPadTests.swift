import Foundation
import HIDCodecs
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
        let virtual = try EmulatedDualSense(kind: .dualSense, transport: .usb, idleRepeat: EmulatedDualSense.idleReportInterval)
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

        // Unplugged: the port is free again.
        virtual.stop()
        XCTAssertNotNil(eventually(timeout: .seconds(10)) { VHCI.ports().allSatisfy { $0.devid >> 16 != VHCI.Mark.emulated.rawValue } ? true : nil },
                        "a vhci port still holds the pad: \(VHCI.ports().filter { !$0.isFree })")
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
