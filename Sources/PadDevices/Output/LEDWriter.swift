import Foundation
import HIDCodecs

/// A pad's LED class devices written on a thread of their own, the newest request winning. Some
/// drivers make each LED write a round trip to the pad: hid-nintendo's player LEDs are
/// subcommands that wait for the pad's input to settle and for its reply, seconds on a busy
/// machine. The forwarding loop hands lights here and goes on with everyone's input.
public final class LEDWriter: @unchecked Sendable {
    private let pad: Pad
    private let root: String
    private let condition = NSCondition()
    // Under `condition`.
    private var playerMask: UInt8?
    private var color: RGBColor?
    private var closed = false
    private var busy = false
    private var failed = 0
    private var written = 0

    public init(pad: Pad, root: String = "/sys/class/leds") {
        self.pad = pad
        self.root = root
        let thread = Thread { [self] in run() }
        thread.name = "padgate LEDs"
        thread.start()
    }

    public func setPlayerMask(_ mask: UInt8) { post { $0.playerMask = mask } }
    public func setColor(_ color: RGBColor) { post { $0.color = color } }

    /// Requests that failed (a driver without those LEDs, a write error), and writes done.
    public var failures: Int { condition.withLock { failed } }
    public var writes: Int { condition.withLock { written } }

    /// Waits until every request so far is written, or `timeout` passes; true if it is.
    public func waitUntilIdle(timeout: Duration) -> Bool {
        let deadline = Date(timeIntervalSinceNow: Double(timeout / .milliseconds(1)) / 1000)
        condition.lock()
        defer { condition.unlock() }
        while busy || playerMask != nil || color != nil {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }

    /// Ends the thread after the write in progress; requests not yet written are dropped.
    public func close() { post { $0.closed = true; $0.playerMask = nil; $0.color = nil } }

    private func post(_ change: (LEDWriter) -> Void) {
        condition.lock()
        change(self)
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        var lastMask: UInt8?, lastColor: RGBColor?
        condition.lock()
        while true {
            while !closed && playerMask == nil && color == nil { condition.wait() }
            if closed { break }
            let mask = playerMask, newColor = color
            playerMask = nil; color = nil
            busy = true
            condition.unlock()
            var failures = 0, writes = 0
            let devices = LEDClassDevices(pad: pad, root: root)
            // The same value again is nothing to the pad: not sent.
            if let mask, mask != lastMask {
                do { try devices.setPlayerMask(mask); lastMask = mask; writes += 1 } catch { failures += 1 }
            }
            if let newColor, newColor != lastColor {
                do { try devices.setColor(newColor); lastColor = newColor; writes += 1 } catch { failures += 1 }
            }
            condition.lock()
            busy = false
            failed += failures
            written += writes
            condition.broadcast()
        }
        condition.unlock()
    }
}
