import Foundation
import MonotonicTime
import WireProtocol

/// One pad `PadForwarder` forwards, and what it remembers of what it sent for it: the per-report
/// step of the forwarding loop (a frame in, its wire messages out). Public so the benchmark
/// times this code, not a copy of it.
public struct ForwardedPad {
    public let source: PadSource
    /// Kept apart: `source.arrival` copies the whole announcement (name, identity reports).
    let slot: PadSlot
    var sender: SnapshotSender
    var touchSequence = WireSequence(0)
    var lastTouch: TouchSnapshot
    var lastBattery: BatteryReport?
    var motionThinning = MotionThinning()
    /// Rumble leases the pad could not play: the first is said, the rest counted.
    var rumbleFailures = 0
    /// Whether the host has been told of the pad (a receiver's empty slot is not announced).
    var announced = false

    public init(_ source: PadSource, schedule: SnapshotSender.Schedule = .standard) {
        self.source = source
        slot = source.arrival.slot
        sender = SnapshotSender(slot: slot, schedule: schedule)
        lastTouch = TouchSnapshot(slot: slot)
    }

    /// What the source's newest frame puts on the wire: what changed, and motion as the thinning
    /// policy lets it go (docs/wire.md), encoded straight into `outbox`. Allocates nothing.
    public mutating func collect(now: MonotonicInstant, into outbox: inout OutgoingPayloads) {
        guard announced else { return }
        var changed = false
        if let state = sender.update(source.controls, now: now) { outbox.append(state); changed = true }
        var touch = source.touch
        if touch.first != lastTouch.first || touch.second != lastTouch.second {
            touch.sequence = touchSequence.next
            touchSequence = touch.sequence
            lastTouch = touch
            outbox.append(touch)
            changed = true
        }
        if let battery = source.battery, battery != lastBattery {
            lastBattery = battery
            outbox.append(battery)
            changed = true
        }
        let slot = slot
        source.takeMotion { sample in
            guard motionThinning.offer(sample, now: now, riding: changed) else { return }
            outbox.appendMotion(sample, slot: slot)
        }
    }

    /// The keep-alive: the state again when its resend is due, with the arrival first (a lost
    /// arrival must not lose the pad), held touches (a lost one would stay lost until the next
    /// finger move) and the battery.
    public mutating func resendIfDue(now: MonotonicInstant, into outbox: inout OutgoingPayloads) {
        guard announced, let state = sender.resendIfDue(now: now) else { return }
        outbox.append(source.arrival)
        outbox.append(state)
        if lastTouch.first.active || lastTouch.second.active { outbox.append(lastTouch) }
        if let lastBattery { outbox.append(lastBattery) }
    }

    /// The arrival and current state, sent when the pad or the link comes up: the state starts the
    /// keep-alives at once, so the host's lease holds even while the pad sends nothing. Until it is
    /// made, `collect` sends nothing.
    public mutating func announcement(now: MonotonicInstant) -> [WireMessage] {
        announced = source.present
        guard announced else { return [] }
        lastBattery = source.battery
        return [.arrival(source.arrival)] + (sender.update(source.controls, now: now).map { [.state($0)] } ?? [])
            + (source.battery.map { [.battery($0)] } ?? [])
    }

    /// The host told of a controller that came onto a receiver's slot (its arrival and state) or
    /// left it (its removal); nil while that has not changed.
    mutating func presenceChange(now: MonotonicInstant) -> [WireMessage]? {
        guard source.present != announced else { return nil }
        guard source.present else {
            announced = false
            source.silence()
            return [.removal(slot)]
        }
        sender = SnapshotSender(slot: slot, schedule: sender.schedule)
        lastTouch = TouchSnapshot(slot: slot)
        return announcement(now: now)
    }

    var nextResend: MonotonicInstant? { announced ? sender.nextResend : nil }
}
