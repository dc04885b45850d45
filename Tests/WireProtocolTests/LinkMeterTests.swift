import XCTest
@testable import WireProtocol

/// The link test's reckoning, from pings and pongs whose fate is chosen here: every figure is
/// computed by hand from that script.
final class LinkMeterTests: XCTestCase {
    /// 1000 pings from id 500; the host misses every 20th (5 %), and of the pongs it sends every
    /// 10th is lost on the way back (10 %); round trips are 40 ms plus the id modulo 5 ms.
    func testLossEachWayRoundTripAndJitterFromAScriptedRun() {
        var meter = LinkMeter()
        var tally = PingTally()
        for id in UInt32(500)..<1500 {
            meter.sent(id: id)
            guard id % 20 != 0 else { continue }  // lost on the way to the host
            tally.count(id)
            guard tally.received % 10 != 0 else { continue }  // its pong lost on the way back
            meter.answered(Probe(id: id, sentMicros: 0).echo(tally), roundTripMicros: 40_000 + (id % 5) * 1000)
        }
        let report = meter.report()
        XCTAssertEqual(report.sent, 1000)
        XCTAssertEqual(tally.received, 950)
        XCTAssertEqual(report.answered, 855)
        // The last ping (1499) was the host's 950th, and its pong was lost: the latest tally seen
        // is ping 1498's, 949 received of the 999 from 500 to 1498.
        XCTAssertEqual(report.lossToHost ?? -1, 1 - 949.0 / 999.0, accuracy: 1e-9)
        // The host had sent 949 pongs by then, and 855 of them came back.
        XCTAssertEqual(report.lossToClient ?? -1, 1 - 855.0 / 949.0, accuracy: 1e-9)
        XCTAssertEqual(report.roundTrip50, .milliseconds(42))
        XCTAssertEqual(report.roundTrip99, .milliseconds(44))
        XCTAssertGreaterThan(report.jitter ?? .zero, .zero)
        XCTAssertEqual(report.verdict.0, .poor, "10 % back is past usable: \(report.verdict)")
        let figures = meter.figures
        XCTAssertEqual(figures.lossToHostPermille, 50)
        XCTAssertEqual(figures.lossToClientPermille, 99)
        XCTAssertTrue((40_000...44_000).contains(figures.roundTripMicros), "\(figures)")
    }

    /// What a playout starts from: the median of the latest changes, so one stall among a
    /// session's first pings does not count as the link's jitter, while a link that is jittery
    /// throughout does; changes older than the last 16 are forgotten.
    func testRecentJitterIsTheMedianOfTheLatestChanges() {
        var meter = LinkMeter()
        var id: UInt32 = 0
        func pong(_ micros: UInt32) {
            meter.sent(id: id)
            var tally = PingTally(); tally.count(id)
            meter.answered(Probe(id: id, sentMicros: 0).echo(tally), roundTripMicros: micros)
            id += 1
        }
        pong(500)
        XCTAssertNil(meter.recentJitter, "one round trip has no change")
        // The first ping answered 30 ms late (the host making its pad), then a steady 0.5-0.7 ms:
        // changes 29.5, 29.4, 0.05, 0.07, 0.04, 0.02, 0.01 ms.
        for rtt: UInt32 in [30_000, 600, 550, 620, 580, 600, 590] { pong(rtt) }
        XCTAssertEqual(meter.recentJitter, .microseconds(50))
        XCTAssertGreaterThan(Double(meter.figures.jitterMicros), 8_000, "the mean keeps the stall: it is the link test's figure")
        // A link jittery throughout: every change 4 ms. After 16 of them the start is forgotten.
        for i in 0..<16 { pong(i % 2 == 0 ? 4_600 : 600) }
        XCTAssertEqual(meter.recentJitter, .microseconds(4_000))
        // Half of the latest 16 at 1 ms and half at 4 ms: the lower median.
        for i in 0..<8 { pong(i % 2 == 0 ? 1_600 : 600) }
        XCTAssertEqual(meter.recentJitter, .microseconds(1_000))
    }

    func testReorderingEachWayIsCounted() {
        var meter = LinkMeter()
        var tally = PingTally()
        for id in UInt32(1)...4 { meter.sent(id: id) }
        var pongs: [Probe] = []
        for id: UInt32 in [1, 3, 2, 4] { tally.count(id); pongs.append(Probe(id: id, sentMicros: 0).echo(tally)) }
        XCTAssertEqual(tally.reordered, 1, "ping 2 arrived after 3")
        for index in [0, 2, 1, 3] { meter.answered(pongs[index], roundTripMicros: 1000) }
        let report = meter.report()
        XCTAssertEqual(report.reorderedToHost, 1)
        XCTAssertEqual(report.reorderedToClient, 1)
        XCTAssertEqual(report.lossToHost, 0)
        XCTAssertEqual(report.lossToClient, 0)
        XCTAssertEqual(report.verdict.0, .good)
    }

    func testNoAnswerIsPoorAndTheLiveFiguresAreEmpty() {
        var meter = LinkMeter()
        meter.sent(id: 1)
        XCTAssertEqual(meter.report().verdict.0, .poor)
        XCTAssertEqual(meter.figures, LinkFigures())
    }

    func testTheVerdictsThresholds() {
        var report = LinkReport()
        report.roundTrip95 = .milliseconds(15); report.jitter = .milliseconds(2); report.lossToHost = 0.005; report.lossToClient = 0
        XCTAssertEqual(report.verdict.0, .good)
        report.roundTrip95 = .milliseconds(50)
        XCTAssertEqual(report.verdict.0, .usable)
        report.lossToHost = 0.2
        XCTAssertEqual(report.verdict.0, .poor)
        XCTAssertEqual(report.verdict.reasons.count, 2, "\(report.verdict.reasons)")
    }

    func testNumbersPrintWithoutFoundation() {
        XCTAssertEqual(LinkReport.milliseconds(.microseconds(1234)), "1.23 ms")
        XCTAssertEqual(LinkReport.milliseconds(.microseconds(41_260)), "41.3 ms")
        XCTAssertEqual(LinkReport.milliseconds(.microseconds(5)), "0.01 ms")
        XCTAssertEqual(LinkReport.percent(0.051), "5.1 %")
        XCTAssertEqual(LinkReport.percent(0), "0.0 %")
    }
}

/// A link test that ended on a host stall (issue 39: it said 0 % loss and "good"): the pings
/// nobody answered count, and an early end is judged poor whatever the figures until then say.
final class LinkVerdictEndingTests: XCTestCase {
    func report(sent: Int, answered: Int) -> LinkReport {
        var report = LinkReport()
        report.sent = sent
        report.answered = answered
        report.roundTrip50 = .microseconds(300); report.roundTrip95 = .microseconds(400); report.roundTrip99 = .microseconds(500)
        report.jitter = .microseconds(50)
        report.lossToHost = 0; report.lossToClient = 0  // the host's tally, from before it stalled
        return report
    }

    func testAllAnsweredIsGood() {
        XCTAssertEqual(report(sent: 250, answered: 250).verdict.0, .good)
    }

    func testATailOfUnansweredPingsIsLoss() {
        let (verdict, reasons) = report(sent: 250, answered: 150).verdict
        XCTAssertEqual(verdict, .poor, "\(reasons)")
        XCTAssertTrue(reasons.contains { $0.contains("40.0 % of pings unanswered") }, "\(reasons)")
    }

    func testAnEarlyEndIsPoor() {
        var early = report(sent: 250, answered: 250)
        early.endedEarly = "the test ended early: the host stopped answering"
        let (verdict, reasons) = early.verdict
        XCTAssertEqual(verdict, .poor)
        XCTAssertEqual(reasons.first, early.endedEarly)
    }
}
