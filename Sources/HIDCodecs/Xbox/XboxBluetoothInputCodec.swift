/// Xbox One and Series pads over Bluetooth, read through their own report descriptor because the
/// layout moves with the firmware. Generic Desktop X/Y and Z/Rz are the sticks (0...65535, +y down),
/// Simulation Brake and Accelerator the left and right triggers (10 bits), a hat with a null state.
/// Buttons are numbered as Linux maps them (Button n is BTN_GAMEPAD + n − 1, so 1 A, 2 B, 4 X,
/// 5 Y, 7 LB, 8 RB, 11 View on newer firmware, 12 Menu, 13 Xbox, 14 and 15 the stick clicks),
/// as SDL_hidapi_xboxone.c reads the same bits and Android's Vendor_045e_Product_02fd.kl names
/// them. Older firmware has View as Consumer AC Back and the Xbox button as AC Home in report 0x02.
/// Report 0x04's Battery Strength (Generic Device Controls 0x20) is the charge, 0...255.
public enum XboxBluetoothLayout {
    static func button(_ n: UInt16) -> Usage { Usage(page: 0x09, id: n) }

    public static let usages = DescriptorGamepadDecoder.UsageMap([
        (Usage(page: 0x01, id: 0x30), .leftX), (Usage(page: 0x01, id: 0x31), .leftY),
        (Usage(page: 0x01, id: 0x32), .rightX), (Usage(page: 0x01, id: 0x35), .rightY),
        (Usage(page: 0x02, id: 0xC5), .leftTrigger), (Usage(page: 0x02, id: 0xC4), .rightTrigger),
        (Usage(page: 0x01, id: 0x39), .hat),
        (button(1), .button(.south)), (button(2), .button(.east)), (button(4), .button(.west)), (button(5), .button(.north)),
        (button(7), .button(.l1)), (button(8), .button(.r1)), (button(11), .button(.create)), (button(12), .button(.options)),
        (button(13), .button(.ps)), (button(14), .button(.l3)), (button(15), .button(.r3)),
        (Usage(page: 0x0C, id: 0x224), .button(.create)), (Usage(page: 0x0C, id: 0x223), .button(.ps)),
        (Usage(page: 0x06, id: 0x20), .batteryStrength),
    ])
}

/// An Xbox pad over Bluetooth, read through the report descriptor its firmware gives
/// (`XboxBluetoothLayout.usages` names the controls).
public struct XboxBluetoothInputCodec: PadInputCodec {
    public let kind = PadKind.xbox
    private var decoder: DescriptorGamepadDecoder

    /// nil when the descriptor describes no gamepad controls.
    public init?(descriptor: ReportDescriptor) {
        guard let decoder = DescriptorGamepadDecoder(descriptor: descriptor, map: XboxBluetoothLayout.usages) else { return nil }
        self.decoder = decoder
    }

    public mutating func decode(_ report: UnsafeRawBufferPointer, into state: inout GamepadState) throws(InputReportError) {
        try decoder.decode(report, into: &state, kind: kind)
    }
}
