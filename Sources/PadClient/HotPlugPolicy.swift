import PadDevices
import PadFamilies
import WireProtocol

/// Which pads `forward` takes, in which slot, and how it reads them: the hot-plug policy, apart
/// from the devices so that it is tested alone (`HotPlugFeeder` carries it out).
public struct HotPlugPolicy: Sendable {
    /// The pads to forward (`forward --pad`, repeatable); empty: every pad.
    public var selectors: [PadSelector]
    /// Read pads with a typed decoder from hidraw (else every pad from evdev: `forward --evdev`).
    public var preferHidraw: Bool
    /// Slots are numbered in the order pads are opened, from 0; a pad that cannot be opened takes
    /// none, and a slot is never given again while the forwarder runs (the host could mistake a
    /// new pad for the old one's return).
    private(set) var nextSlot: UInt8 = 0

    public init(selectors: [PadSelector] = [], preferHidraw: Bool = true) {
        self.selectors = selectors
        self.preferHidraw = preferHidraw
    }

    /// How a pad is read.
    public enum Reading: Equatable, Sendable {
        case hidraw(path: String)
        case evdev
    }

    /// What to do about one change the monitor saw.
    public enum Action: Equatable, Sendable {
        case attach(Pad, index: Int)
        case detach(id: String)
    }

    /// Whether `pad`, at `index` in the monitor's list, is forwarded: never a virtual pad a host
    /// made (on a machine that is both, that would loop) or one another program made for a
    /// controller it reads (Steam Input's: double input), and only one a selector names.
    public func forwards(_ pad: Pad, at index: Int) -> Bool {
        !pad.isHostVirtualPad && pad.madeByAnotherProgram == nil && (selectors.isEmpty || selectors.contains { $0.matches(pad, at: index) })
    }

    /// hidraw first, for pads with a typed decoder; evdev for the rest.
    public func reading(for pad: Pad) -> Reading {
        if preferHidraw, HidrawPadSource.reads(pad), let hidraw = pad.hidraw { return .hidraw(path: hidraw) }
        return .evdev
    }

    /// The actions for `change`, given which pad ids are forwarded now and each pad's index.
    public func actions(for change: PadChange, forwarded: (String) -> Bool, index: (Pad) -> Int) -> [Action] {
        switch change {
        case .removed(let gone):
            return forwarded(gone.id) ? [.detach(id: gone.id)] : []
        case .arrived(let new):
            return [.attach(new, index: index(new))]
        case .changed(let old, let new) where old.evdev != new.evdev:
            // Different nodes to read: start over with them.
            return (forwarded(old.id) ? [.detach(id: old.id)] : []) + [.attach(new, index: index(new))]
        case .changed(_, let new) where !forwarded(new.id):
            return [.attach(new, index: index(new))]
        case .changed:
            return []  // a battery or LED appeared: the pad as forwarded is unchanged
        }
    }

    /// The slot the next opened pad gets; call `opened()` once it is open.
    public var slotForNext: PadSlot { PadSlot(nextSlot) }
    public mutating func opened() { nextSlot &+= 1 }
}
