import HIDCodecs

/// The family codecs by kind, for tests that loop over kinds. In the product each family's driver
/// chooses its codec (`PadDriver.inputCodec`); `DriverCodecTests` (PadDevicesTests) holds the
/// drivers to the same choices.
enum TestCodecs {
    static let catalogue: InputCodecCatalogue = { kind, descriptor in
        switch kind {
        case .dualSense: PlayStationInputCodec.dualSense
        case .dualSenseEdge: PlayStationInputCodec.dualSenseEdge
        case .dualShock4: PlayStationInputCodec.dualShock4
        case .switchPro: SwitchProInputCodec()
        case .xbox: descriptor.flatMap(XboxBluetoothInputCodec.init(descriptor:))
        case .steamDeck: SteamDeckInputCodec()
        case .steamController: SteamControllerInputCodec()
        case .generic: nil
        }
    }
}

extension ControllerInputDecoder {
    init?(kind: PadKind, descriptor: ReportDescriptor? = nil) {
        guard let codec = TestCodecs.catalogue(kind, descriptor) else { return nil }
        self.init(codec)
    }
}
