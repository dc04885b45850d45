import ArgumentParser
import Foundation
import HIDCodecs
import PadClient
import PadSystem
import Transport
import WireProtocol

/// `padgate probe HOST`: a link test over the real, paired, encrypted link, at forwarding's own
/// rate and size, read the way ping and mtr read a link (docs/link-test.md).
struct ProbeCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Test the link to a host before playing: round trip, jitter, loss each way, reordering.",
        discussion: """
            Connects as 'forward' does (pair first) and sends \(probeRate) sealed datagrams a second, each as long as a \
            pad's input datagram; the host answers each. Reports round trip p50/p95/p99, jitter, loss to the host and \
            back, reordering and duplicates, and whether that is good enough for forwarding (thresholds in docs/link-test.md).
            """)

    /// Forwarding's own rate: a DualSense reports 250 times a second over USB.
    static let probeRate = 250

    @Argument(help: "HOST, HOST:PORT or [IPV6]:PORT of 'padgate serve'; without it, the one paired host on the LAN.") var host: HostAddress?
    @Option(parsing: .unconditional, help: "How long to measure.", transform: SecondsOption.parse) var seconds: Double = 10
    @Flag(help: "The report as one JSON object.") var json = false

    func run() throws {
        SignalTrap.install {}
        let state = PadgatePaths.stateDirectory
        let identity = try TLSIdentity(directory: state.appendingPathComponent("client"), commonName: "padgate client")
        let target = try Discovery.target(host, for: .forward, identity: identity)
        var configuration = target.forwarding
        configuration.pinsUnknownHosts = false  // trust comes from pairing, never from a link test
        configuration.pingInterval = .seconds(1) / Self.probeRate
        configuration.urgentPingInterval = configuration.pingInterval
        configuration.pingPadding = Probe.inputSizedPadding
        configuration.keptRoundTrips = Int(seconds.rounded(.up)) * Self.probeRate
        let forwarder = PadForwarder(configuration: configuration, identity: identity, knownHosts: try KnownHostStore(url: PadgatePaths.knownHostsFile))
        if !json { commandLog.info("probing \(target.display) for \(SecondsOption.text(seconds)) at \(Self.probeRate) datagrams/s each way") }
        let measured = try forwarder.measureLinkToItsEnd(for: SecondsOption.duration(seconds)) { SignalTrap.fired }
        let report = measured.report
        if SignalTrap.fired && report.answered == 0 && measured.ending == nil { throw TLSError.interrupted }
        // What was measured is reported however the test ended, and how it ended with it.
        let after = String(format: "%.1f s", Double(measured.measured / .milliseconds(1)) / 1000)
        let ended: (how: String, text: String)
        if let ending = measured.ending {
            let how: String
            switch ending as? TLSError {
            case .hostSilent?: how = "host-silent"
            case .closed?: how = "host-closed"
            default: how = "failed"
            }
            ended = (how, "ended early after \(after): \(ending)")
        } else if SignalTrap.fired {
            ended = ("signal", "stopped by a signal after \(after)")
        } else {
            ended = ("completed", "ran its \(SecondsOption.text(seconds))")
        }
        if json {
            var object = Self.json(report, host: target.display)
            if case .object(var members) = object {
                members.append(("ended", .object([("how", .string(ended.how)), ("after_seconds", .double(Double(measured.measured / .milliseconds(1)) / 1000)),
                                                  ("message", .string(ended.text))])))
                object = .object(members)
            }
            print(object.serialized(pretty: true))
        } else {
            print(Self.text(report, host: target.display) + "\nthe test \(ended.text)")
        }
        if measured.ending != nil { throw InputFile.ReadError("the link test \(ended.text); the figures above are until then") }
    }

    static func text(_ r: LinkReport, host: String) -> String {
        func ms(_ d: Duration?) -> String { d.map(LinkReport.milliseconds) ?? "-" }
        func pct(_ f: Double?) -> String { f.map(LinkReport.percent) ?? "-" }
        let (verdict, reasons) = r.verdict
        let meaning: String
        switch verdict {
        case .good: meaning = "good for forwarding"
        case .usable: meaning = "usable: input stays right (re-sends cover the loss), but buttons and rumble may feel late"
        case .poor: meaning = "poor for forwarding: expect late or dropped input"
        }
        return """
            --- \(host) link test ---
            \(r.sent) probes sent, \(r.answered) answered
            round trip  p50 \(ms(r.roundTrip50))  p95 \(ms(r.roundTrip95))  p99 \(ms(r.roundTrip99))  jitter \(ms(r.jitter))
            loss        to the host \(pct(r.lossToHost))  back \(pct(r.lossToClient))
            reordered   to the host \(r.reorderedToHost)  back \(r.reorderedToClient)
            duplicates  to the host \(r.duplicatesToHost)  back \(r.duplicatesToClient)
            verdict: \(meaning)\(reasons.isEmpty ? "" : " (\(reasons.joined(separator: ", ")))")
            """
    }

    static func json(_ r: LinkReport, host: String) -> JSONValue {
        func ms(_ d: Duration?) -> JSONValue { d.map { .double(Double($0 / .microseconds(1)) / 1000) } ?? .null }
        func fraction(_ f: Double?) -> JSONValue { f.map { .double(($0 * 1000).rounded() / 10) } ?? .null }
        let (verdict, reasons) = r.verdict
        return .object([
            ("host", .string(host)), ("sent", .int(Int64(r.sent))), ("answered", .int(Int64(r.answered))),
            ("round_trip_ms", .object([("p50", ms(r.roundTrip50)), ("p95", ms(r.roundTrip95)), ("p99", ms(r.roundTrip99))])),
            ("jitter_ms", ms(r.jitter)),
            ("loss_percent", .object([("to_host", fraction(r.lossToHost)), ("to_client", fraction(r.lossToClient))])),
            ("reordered", .object([("to_host", .int(Int64(r.reorderedToHost))), ("to_client", .int(Int64(r.reorderedToClient)))])),
            ("duplicates", .object([("to_host", .int(Int64(r.duplicatesToHost))), ("to_client", .int(Int64(r.duplicatesToClient)))])),
            ("verdict", .string(verdict.rawValue)), ("reasons", .array(reasons.map(JSONValue.string))),
        ])
    }
}

extension ProbeCommand: LoggingCommand {}
