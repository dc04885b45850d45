import Foundation
import MonotonicTime
import PadSystem

public enum PadChange: Sendable, Equatable {
    case arrived(Pad)
    case removed(Pad)
    /// The same controller, seen again with different nodes or capabilities (its battery or a
    /// node registered after the first look). Not an unplug: readers keep their nodes if those
    /// did not change.
    case changed(old: Pad, new: Pad)

    public var pad: Pad {
        switch self { case .arrived(let pad), .removed(let pad), .changed(_, let pad): return pad }
    }
}

/// The set of plugged-in pads, kept current from udev hot-plug events.
public final class PadMonitor {
    public let udev: Udev
    let monitor: UdevMonitor
    public private(set) var pads: [Pad]
    /// A controller announces a burst of devices (HID, hidraw, three input nodes, LEDs, battery);
    /// after the first event, wait this long for the burst to end before regrouping.
    public var settleTime: Duration = .milliseconds(150)

    public init() throws {
        udev = try Udev()
        monitor = try UdevMonitor(udev)  // before enumerating, so nothing falls between the two
        pads = udev.pads()
    }

    public var descriptor: FileDescriptor { monitor.descriptor }

    /// Call when `descriptor` is readable. Returns what changed; empty if nothing pad-related did.
    public func handleEvents() -> [PadChange] {
        var events = monitor.drain()
        guard !events.isEmpty else { return [] }
        while Poll.wait([monitor.descriptor], timeout: settleTime)[0].readable {
            events += monitor.drain()
        }
        return refresh()
    }

    /// Blocks until the set of pads changes or `timeout` passes.
    public func waitForChanges(timeout: Duration?) -> [PadChange] {
        let deadline = timeout.map { MonotonicInstant.now + $0 }
        while true {
            let remaining = deadline.map { $0 - MonotonicInstant.now }
            if let remaining, remaining <= .zero { return [] }
            guard Poll.wait([monitor.descriptor], timeout: remaining)[0].readable else { continue }
            let changes = handleEvents()
            if !changes.isEmpty { return changes }
        }
    }

    /// The first pad that satisfies `match`, now or once hot-plug events bring one; nil on timeout.
    public func waitForPad(timeout: Duration, where match: (Pad) -> Bool) -> Pad? {
        let deadline = MonotonicInstant.now + timeout
        while true {
            if let pad = pads.first(where: match) { return pad }
            let remaining = deadline - MonotonicInstant.now
            guard remaining > .zero else { return nil }
            if Poll.wait([monitor.descriptor], timeout: remaining)[0].readable { _ = handleEvents() }
        }
    }

    /// Re-reads udev and diffs against the pads known so far.
    public func refresh() -> [PadChange] {
        let now = udev.pads()
        let changes = Self.diff(old: pads, new: now)
        pads = now
        return changes
    }

    static func diff(old: [Pad], new: [Pad]) -> [PadChange] {
        let oldByID = Dictionary(old.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let newByID = Dictionary(new.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var changes: [PadChange] = old.filter { newByID[$0.id] == nil }.map { .removed($0) }
        for pad in new {
            if let before = oldByID[pad.id] {
                if before != pad { changes.append(.changed(old: before, new: pad)) }
            } else {
                changes.append(.arrived(pad))
            }
        }
        return changes
    }
}
