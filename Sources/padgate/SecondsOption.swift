import ArgumentParser

/// Options given in seconds (`--duration`, `--seconds`, `--pad-grace`): one check for every command,
/// so that NaN, infinity, a negative number or a century never reaches a clock (where it would trap
/// or wait forever).
enum SecondsOption {
    /// A year: longer than anyone leaves a command running with a deadline, and far from overflow.
    static let longest = 31_536_000.0

    /// Parses seconds such as `2`, `0.5` or `1e3`, finite, more than 0 and at most a year.
    static func parse(_ text: String) throws -> Double {
        guard let value = Double(text), value.isFinite else {
            throw ValidationError("'\(text.prefix(40))' is not a number of seconds (write 2, 0.5 or 90)")
        }
        guard value > 0, value <= longest else {
            throw ValidationError("seconds must be more than 0 and at most \(Int(longest)) (a year), not \(text.prefix(40))")
        }
        return value
    }

    /// `2 s`, `0.5 s`: for messages.
    static func text(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }

    /// The same seconds as a `Duration`, to the millisecond.
    static func duration(_ seconds: Double) -> Duration { .milliseconds(Int((seconds * 1000).rounded())) }
}
