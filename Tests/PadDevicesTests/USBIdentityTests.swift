import Foundation
@testable import PadFamilies
import XCTest
import USBDevice
@testable import PadDevices

/// The host's USB DualSense and Edge are the pads' own bytes, and answer a host stack as the
/// real Edge answered Linux's probe in a usbmon capture (transfer by transfer: data and stalls).
final class USBIdentityTests: XCTestCase {
    static func fixture(_ name: String) throws -> [UInt8] {
        let url = try XCTUnwrap(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures/usb"))
        return Array(try Data(contentsOf: url))
    }

    func testTheDualSensesDescriptorsAreTheCapturedOnes() throws {
        let d = try XCTUnwrap(DualSenseUSBDescriptors.descriptors(.dualSense))
        XCTAssertEqual(d.device, try Self.fixture("dualsense_054c_0ce6_device.bin"))
        XCTAssertEqual(d.configuration, try Self.fixture("dualsense_054c_0ce6_config.bin"))
        XCTAssertEqual(d.reportDescriptors[3], try Self.fixture("dualsense_054c_0ce6_rdesc_usb_273.bin"))
        XCTAssertEqual(d.deviceQualifier, try Self.fixture("dualsense_054c_0ce6_device_qualifier_from_text.bin"))
        XCTAssertEqual(d.otherSpeedConfiguration, try Self.fixture("dualsense_054c_0ce6_other_speed_config_from_text.bin"))
        XCTAssertEqual(d.strings[1], try Self.fixture("dualsense_054c_0ce6_string1.bin"))
        XCTAssertEqual(d.strings[2], try Self.fixture("dualsense_054c_0ce6_string2.bin"))
        XCTAssertEqual(d.strings[0], try Self.fixture("dualsense_edge_054c_0df2_string0.bin"), "LANGID 0x0409")
        XCTAssertEqual(d.vendorID, 0x054c)
        XCTAssertEqual(d.productID, 0x0ce6)
        // What the configuration declares: AC, 4-channel out (1 alt), mic (2 alt), HID with IN 0x84 and OUT 0x03.
        XCTAssertEqual(d.interfaces.map(\.number), [0, 1, 1, 2, 2, 3])
        XCTAssertEqual(d.endpoint(0x01)?.endpoint.transferType, 1)
        XCTAssertEqual(d.endpoint(0x01)?.endpoint.maxPacketSize, 392)
        XCTAssertEqual(d.endpoint(0x82)?.endpoint.maxPacketSize, 196)
        XCTAssertEqual(d.endpoint(0x84)?.endpoint.transferType, 3)
        XCTAssertEqual(d.endpoint(0x03)?.endpoint.maxPacketSize, 64)
    }

    func testTheEdgesDescriptorsAreTheCapturedOnes() throws {
        let d = try XCTUnwrap(DualSenseUSBDescriptors.descriptors(.dualSenseEdge))
        XCTAssertEqual(d.device, try Self.fixture("dualsense_edge_054c_0df2_device.bin"))
        XCTAssertEqual(d.configuration, try Self.fixture("dualsense_edge_054c_0df2_config.bin"))
        XCTAssertEqual(d.reportDescriptors[3], try Self.fixture("dualsense_edge_054c_0df2_rdesc_usb_389.bin"))
        for i in 0...2 { XCTAssertEqual(d.strings[UInt8(i)], try Self.fixture("dualsense_edge_054c_0df2_string\(i).bin"), "string \(i)") }
        XCTAssertNil(DualSenseUSBDescriptors.descriptors(.dualShock4))
    }

    /// Every control transfer of the Edge's Linux probe, in order, answered as the Edge answered it.
    func testTheEdgeAnswersLinuxsProbeAsTheRealEdgeDid() throws {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "dualsense_edge_054c_0df2_probe_controls_rogueenemy_linux", withExtension: "json", subdirectory: "Fixtures/usb"))
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let transfers = try XCTUnwrap(json["transfers"] as? [[String: Any]]).filter { $0["dev"] as? Int == 32 }
        XCTAssertGreaterThan(transfers.count, 50)
        var state = USBControlState(descriptors: try XCTUnwrap(DualSenseUSBDescriptors.descriptors(.dualSenseEdge)),
                                    audioUnits: DualSenseUSBDescriptors.audioUnits)
        var kinds: Set<String> = []
        for (n, transfer) in transfers.enumerated() {
            let setupBytes = try hex(try XCTUnwrap(transfer["setup"] as? String))
            let setup = setupBytes.withUnsafeBytes { SetupPacket($0, at: 0) }
            let out = try hex(transfer["data_out"] as? String ?? "")
            let expectedIn = try hex(transfer["data_in"] as? String ?? "")
            let status = transfer["status"] as? Int ?? 0
            let name = transfer["request"] as? String ?? "?"
            kinds.insert(name)
            let outcome = state.handle(setup, data: out)
            switch outcome {
            case .stall:
                XCTAssertEqual(status, -32, "#\(n) \(name): stalled where the Edge answered")
            case .answer(let data):
                XCTAssertEqual(status, 0, "#\(n) \(name): answered where the Edge stalled")
                if setup.isDeviceToHost {
                    XCTAssertEqual(Array(data.prefix(Int(setup.length))), expectedIn, "#\(n) \(name) \(transfer["setup"] ?? "")")
                }
            case .hid(let request):
                // Reports are the pad's to answer (its calibration, address, firmware): the request reaches it as asked.
                XCTAssertEqual(request, .getReport(type: 3, id: UInt8(setup.value & 0xff), length: Int(setup.length)), "#\(n) \(name)")
            }
        }
        XCTAssertTrue(kinds.isSuperset(of: ["GET_DESCRIPTOR", "SET_CONFIGURATION", "SET_INTERFACE", "HID_SET_IDLE", "HID_GET_REPORT",
                                            "UAC1_GET_CUR", "UAC1_SET_CUR", "UAC1_GET_MIN", "UAC1_GET_MAX", "UAC1_GET_RES", "UAC1_SET_RES"]), "\(kinds)")
        XCTAssertEqual(state.configuration, 1)
    }

    func testEndpointsAreLiveOnlyInTheirSettingAndConfiguration() throws {
        var state = USBControlState(descriptors: try XCTUnwrap(DualSenseUSBDescriptors.descriptors(.dualSense)), audioUnits: DualSenseUSBDescriptors.audioUnits)
        XCTAssertFalse(state.isActive(endpoint: 0x84), "unconfigured")
        XCTAssertEqual(state.handle(SetupPacket(requestType: 0, request: 9, value: 2, index: 0, length: 0), data: []), .stall, "no configuration 2")
        XCTAssertEqual(state.handle(SetupPacket(requestType: 0, request: 9, value: 1, index: 0, length: 0), data: []), .answer([]))
        XCTAssertTrue(state.isActive(endpoint: 0x84))
        XCTAssertFalse(state.isActive(endpoint: 0x01), "the audio stream's alternate 0 has no endpoint")
        XCTAssertEqual(state.handle(SetupPacket(requestType: 1, request: 11, value: 1, index: 1, length: 0), data: []), .answer([]))
        XCTAssertTrue(state.isActive(endpoint: 0x01))
        XCTAssertEqual(state.handle(SetupPacket(requestType: 1, request: 11, value: 5, index: 1, length: 0), data: []), .stall, "no alternate 5")
        XCTAssertEqual(state.handle(SetupPacket(requestType: 0x81, request: 10, value: 0, index: 1, length: 1), data: []), .answer([1]))
        // A volume outside the unit's range is held to it; a short SET_CUR stalls.
        XCTAssertEqual(state.handle(SetupPacket(requestType: 0x21, request: 1, value: 0x0200, index: 0x0200, length: 2), data: [0xff, 0x7f]), .answer([]))
        XCTAssertEqual(state.handle(SetupPacket(requestType: 0xa1, request: 0x81, value: 0x0200, index: 0x0200, length: 2), data: []), .answer([0, 0]))
        XCTAssertEqual(state.handle(SetupPacket(requestType: 0x21, request: 1, value: 0x0200, index: 0x0200, length: 2), data: [0x01]), .stall)
        XCTAssertEqual(state.handle(SetupPacket(requestType: 0x40, request: 1, value: 0, index: 0, length: 0), data: []), .stall, "vendor requests")
    }

    private func hex(_ text: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(try XCTUnwrap(UInt8(text[index..<next], radix: 16)))
            index = next
        }
        return bytes
    }
}
