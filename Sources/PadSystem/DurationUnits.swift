/// The conversions syscalls and timers want, in one place.
extension Duration {
    /// Whole milliseconds, rounded down (poll(2), hidapi, FF replay lengths).
    public var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
    /// Seconds as a floating-point number (Foundation's sleeps and dates, printed times).
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
