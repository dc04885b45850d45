import ArgumentParser
import HIDCodecs
import PadClient
import PadDevices
import PadFamilies

/// `--bus usb|bt`, by the bus's short name.
extension PadBus: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
    public static var allValueStrings: [String] { allCases.map(\.shortName) }
    public var defaultValueDescription: String { shortName }
}

extension PadFeedback.RumblePath: ExpressibleByArgument {}

extension CalibrationConvention: ExpressibleByArgument {}
extension GyroCalibrationMode: ExpressibleByArgument {}

/// `--model` where there is no pad to ask: which PlayStation pad's reports to build or read, named
/// as `PadKind` names it. A DualSense Edge speaks the DualSense's reports.
struct PlayStationKind: ExpressibleByArgument {
    let kind: PadKind
    static let dualSense = PlayStationKind(kind: .dualSense)

    private init(kind: PadKind) { self.kind = kind }

    init?(argument: String) {
        guard let kind = PadKind(name: argument), kind.isPlayStation else { return nil }
        self.kind = kind
    }

    static var allValueStrings: [String] { PadKind.allCases.filter(\.isPlayStation).map(\.name) }
    var defaultValueDescription: String { kind.name }
}

extension VirtualPadTransport: ExpressibleByArgument {}
