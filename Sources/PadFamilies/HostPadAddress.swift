import HIDCodecs
import WireProtocol

/// The address of a host pad whose family has one (a PlayStation pad's MAC, a Switch Pro's).
public enum HostPadAddress {
    /// An address for the host's pad that is the same whenever the same physical pad of the same
    /// client arrives (so Steam keeps its settings across reconnects and host restarts), and never
    /// the same for two pads: a hash of the client's paired identity and the pad's own (its
    /// address or serial; without one, its slot and its calibration and firmware reports, which
    /// two units can share), locally administered so it can never be a real pad's. Issue 42: from
    /// the reports alone, two emulated DualSenses got one address and the kernel refused the second.
    /// nil (a random one) when the pad says nothing about itself.
    public static func stable(for arrival: PadArrival, kind: PadKind) -> [UInt8]? {
        let identity = arrival.identity
        let own = identity.unit.isEmpty ? [arrival.slot.rawValue] + identity.calibration.bytes + identity.firmware.bytes : identity.unit.bytes
        guard !identity.unit.isEmpty || !identity.calibration.isEmpty else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325   // FNV-1a
        for byte in [kind.rawValue, UInt8(identity.client.count)] + identity.client.bytes + own {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        var mac = (0..<6).map { UInt8(truncatingIfNeeded: hash >> (8 * UInt64($0))) }
        mac[0] = (mac[0] & 0xfc) | 0x02
        return mac
    }
}
