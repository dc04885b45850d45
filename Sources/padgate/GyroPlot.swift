import ArgumentParser
import Foundation
import HIDCodecs

/// `calibrate --plot FILE.svg`: the gyro's three axes over time, the rest windows the continuous
/// calibration found (shaded) and the bias it subtracted (thick dashed lines), as an SVG written
/// by hand. Two panels: the whole range, and a zoom around zero where the bias lives.
struct GyroPlot {
    var title: String
    var subtitle: String
    var points: [RecordedGyroCalibration.Point]
    var windows: [GyroBiasEstimator.RestWindow]

    static let width = 1000.0, panelHeight = 250.0
    static let left = 70.0, right = 20.0, top = 84.0, gap = 46.0, bottom = 76.0
    static let colours = ["#d62728", "#2ca02c", "#1f77b4"]
    static let axisNames = ["x (pitch)", "y (yaw)", "z (roll)"]

    var svg: String {
        let plotWidth = Self.width - Self.left - Self.right
        let t0 = min(points.first?.time ?? 0, 0), t1 = max(points.last?.time ?? 1, t0 + 0.001)
        func x(_ t: Double) -> Double { Self.left + (t - t0) / (t1 - t0) * plotWidth }

        // Full range: every value; zoom: the bias and the estimate with room for the noise.
        let values = points.flatMap { $0.gyro.all }
        let peak = max(1, values.map(abs).max() ?? 1)
        let biases = points.flatMap { $0.correction.all } + windows.flatMap { $0.gyroMean.all }
        let zoom = Self.niceCeiling(max(0.5, 2.5 * (biases.map(abs).max() ?? 0), noiseSpan()))
        // The whole range gets its own panel only when the pad moved beyond the zoom.
        let panels = peak * 1.05 > 1.5 * zoom ? [(peak * 1.05, "gyro, deg/s"), (zoom, "zoom: ±\(Self.number(zoom)) deg/s")] : [(zoom, "gyro, deg/s")]
        let height = Self.top + Double(panels.count) * Self.panelHeight + Double(panels.count - 1) * Self.gap + Self.bottom
        let subtitle = self.subtitle.components(separatedBy: "; ")

        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(Self.width))" height="\(Int(height))" viewBox="0 0 \(Int(Self.width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Self.left)" y="24" font-size="16" font-weight="bold">\(Self.escape(title))</text>
            <text x="\(Self.left)" y="46" fill="#444">\(Self.escape(subtitle.first ?? ""))</text>
            <text x="\(Self.left)" y="64" fill="#444">\(Self.escape(subtitle.dropFirst().joined(separator: "; ")))</text>

            """
        for (index, (range, label)) in panels.enumerated() {
            let y0 = Self.top + Double(index) * (Self.panelHeight + Self.gap)
            func y(_ v: Double) -> Double { y0 + Self.panelHeight / 2 - v / range * Self.panelHeight / 2 }
            let clip = "panel\(index)"
            out += "<defs><clipPath id=\"\(clip)\"><rect x=\"\(f(Self.left))\" y=\"\(f(y0))\" width=\"\(f(plotWidth))\" height=\"\(f(Self.panelHeight))\"/></clipPath></defs>\n"
            // Rest windows, shaded, in both panels.
            for w in windows {
                out += "<rect x=\"\(f(x(w.start)))\" y=\"\(f(y0))\" width=\"\(f(max(1, x(w.end) - x(w.start))))\" height=\"\(f(Self.panelHeight))\" fill=\"#e8e8e8\" class=\"rest\"/>\n"
            }
            // Grid and ticks.
            for tick in Self.ticks(-range, range) {
                out += "<line x1=\"\(f(Self.left))\" x2=\"\(f(Self.left + plotWidth))\" y1=\"\(f(y(tick)))\" y2=\"\(f(y(tick)))\" stroke=\"\(tick == 0 ? "#888" : "#ddd")\" stroke-width=\"1\"/>\n"
                out += "<text x=\"\(f(Self.left - 6))\" y=\"\(f(y(tick) + 4))\" text-anchor=\"end\" fill=\"#444\">\(Self.number(tick))</text>\n"
            }
            for tick in Self.ticks(t0, t1) where tick >= t0 {
                out += "<line x1=\"\(f(x(tick)))\" x2=\"\(f(x(tick)))\" y1=\"\(f(y0))\" y2=\"\(f(y0 + Self.panelHeight))\" stroke=\"#eee\"/>\n"
                out += "<text x=\"\(f(x(tick)))\" y=\"\(f(y0 + Self.panelHeight + 16))\" text-anchor=\"middle\" fill=\"#444\">\(Self.number(tick))</text>\n"
            }
            out += "<text x=\"16\" y=\"\(f(y0 + Self.panelHeight / 2))\" transform=\"rotate(-90 16 \(f(y0 + Self.panelHeight / 2)))\" text-anchor=\"middle\">\(Self.escape(label))</text>\n"
            out += "<g clip-path=\"url(#\(clip))\" fill=\"none\">\n"
            for axis in 0..<3 {
                out += "<polyline stroke=\"\(Self.colours[axis])\" stroke-width=\"1\" stroke-opacity=\"0.55\" points=\"\(envelope(axis: axis, x: x, y: y, columns: Int(plotWidth)))\"/>\n"
            }
            // The bias subtracted: a step line per axis, drawn over the samples.
            for axis in 0..<3 {
                out += "<polyline stroke=\"\(Self.colours[axis])\" stroke-width=\"2.5\" stroke-dasharray=\"7 3\" points=\"\(correctionLine(axis: axis, x: x, y: y))\"/>\n"
            }
            out += "</g>\n<rect x=\"\(f(Self.left))\" y=\"\(f(y0))\" width=\"\(f(plotWidth))\" height=\"\(f(Self.panelHeight))\" fill=\"none\" stroke=\"#888\"/>\n"
        }
        let footer = height - 22
        out += "<text x=\"\(f(Self.left + plotWidth / 2))\" y=\"\(f(footer - 24))\" text-anchor=\"middle\" fill=\"#444\">seconds (the pad's sensor clock)</text>\n"
        // Legend.
        var lx = Self.left
        for axis in 0..<3 {
            out += "<line x1=\"\(f(lx))\" x2=\"\(f(lx + 22))\" y1=\"\(f(footer))\" y2=\"\(f(footer))\" stroke=\"\(Self.colours[axis])\" stroke-width=\"2\"/>"
            out += "<text x=\"\(f(lx + 28))\" y=\"\(f(footer + 4))\">gyro \(Self.axisNames[axis])</text>\n"
            lx += 120
        }
        out += "<line x1=\"\(f(lx))\" x2=\"\(f(lx + 22))\" y1=\"\(f(footer))\" y2=\"\(f(footer))\" stroke=\"#333\" stroke-width=\"2.5\" stroke-dasharray=\"7 3\"/>"
        out += "<text x=\"\(f(lx + 28))\" y=\"\(f(footer + 4))\">bias subtracted (estimate, eased in)</text>\n"
        lx += 260
        out += "<rect x=\"\(f(lx))\" y=\"\(f(footer - 7))\" width=\"22\" height=\"14\" fill=\"#e8e8e8\" stroke=\"#ccc\"/>"
        out += "<text x=\"\(f(lx + 28))\" y=\"\(f(footer + 4))\">rest window: its samples set the bias (\(windows.count))</text>\n"
        out += "</svg>\n"
        return out
    }

    /// A span that shows the resting noise in the zoom: 4 standard deviations of the windows' noise.
    private func noiseSpan() -> Double {
        4 * (windows.flatMap { $0.gyroNoise.all }.max() ?? 0.1) + (windows.flatMap { $0.gyroMean.all }.map(abs).max() ?? 0)
    }

    /// The samples of one axis as a polyline: per pixel column its minimum and maximum, so a
    /// recording of any length draws in about 2 points a column and keeps its spikes.
    private func envelope(axis: Int, x: (Double) -> Double, y: (Double) -> Double, columns: Int) -> String {
        guard let first = points.first, let last = points.last else { return "" }
        let span = max(last.time - first.time, 1e-9)
        var out: [String] = []
        var column = -1, low = 0.0, high = 0.0, lowAt = 0, highAt = 0, time = 0.0
        func flush() {
            guard column >= 0 else { return }
            let (a, b) = lowAt <= highAt ? (low, high) : (high, low)
            out.append("\(f(x(time))),\(f(y(a)))")
            if a != b { out.append("\(f(x(time))),\(f(y(b)))") }
        }
        for (i, p) in points.enumerated() {
            let v = p.gyro.all[axis]
            let c = min(columns, Int((p.time - first.time) / span * Double(columns)))
            if c != column {
                flush()
                column = c; low = v; high = v; lowAt = i; highAt = i; time = p.time
            } else {
                if v < low { low = v; lowAt = i }
                if v > high { high = v; highAt = i }
            }
        }
        flush()
        return out.joined(separator: " ")
    }

    /// The correction as it changed: a point wherever it moved by more than a hair.
    private func correctionLine(axis: Int, x: (Double) -> Double, y: (Double) -> Double) -> String {
        var out: [String] = []
        var last: Double?
        for (i, p) in points.enumerated() {
            let v = p.correction.all[axis]
            if i == 0 || i == points.count - 1 || abs(v - (last ?? .infinity)) > 0.0005 {
                out.append("\(f(x(p.time))),\(f(y(v)))")
                last = v
            }
        }
        return out.joined(separator: " ")
    }

    /// About five round ticks between `low` and `high`.
    static func ticks(_ low: Double, _ high: Double) -> [Double] {
        let step = niceStep((high - low) / 5)
        var t = (low / step).rounded(.up) * step
        var out: [Double] = []
        while t <= high + step * 1e-9 { out.append(abs(t) < step * 1e-9 ? 0 : t); t += step }
        return out
    }

    static func niceStep(_ raw: Double) -> Double {
        guard raw > 0 else { return 1 }
        let magnitude = pow(10, (log10(raw)).rounded(.down))
        for m in [1.0, 2, 2.5, 5, 10] where m * magnitude >= raw { return m * magnitude }
        return 10 * magnitude
    }

    static func niceCeiling(_ v: Double) -> Double {
        let magnitude = pow(10, (log10(v)).rounded(.down))
        for m in [1.0, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10] where m * magnitude >= v { return m * magnitude }
        return 10 * magnitude
    }

    static func number(_ v: Double) -> String {
        if v == v.rounded() && abs(v) < 1e6 { return String(Int(v)) }
        var s = String(format: "%.3f", v)
        while s.hasSuffix("0") { s.removeLast() }
        return s
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    private func f(_ v: Double) -> String { String(format: "%.1f", v) }

    func write(to path: String) throws { try OutputFile.write(svg, to: path, option: "--plot") }
}
