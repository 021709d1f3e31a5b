/// Inline SVG charts for the HTML report and the dashboard page: no script, no external resource.
package enum SVGChart {
    /// A series of values, one per category (bars) or per x position (lines).
    package struct Series: Sendable {
        package var name: String
        package var values: [Double?]

        package init(name: String, values: [Double?]) {
            self.name = name
            self.values = values
        }
    }

    /// Distinct colours for series, in order (the last one stands for "other").
    static let palette = [
        "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    ]

    static func color(_ index: Int) -> String { palette[index % palette.count] }

    /// Vertical stacked bars: one bar per category, one segment per series, with a legend.
    package static func stackedBars(
        title: String, categories: [String], series: [Series], unit: String, width: Int = 720, height: Int = 280
    ) -> String {
        let (left, top, plotWidth, plotHeight, legendX) = plotArea(width: width, height: height)
        let totals = categories.indices.map { index in series.reduce(0) { $0 + max(0, $1.values[index] ?? 0) } }
        let maximum = niceCeiling(totals.max() ?? 0)
        var svg = open(title: title, width: width, height: height)
        svg += axis(left: left, top: top, plotWidth: plotWidth, plotHeight: plotHeight, maximum: maximum, unit: unit)
        let slot = plotWidth / Double(max(1, categories.count))
        let barWidth = min(48, slot * 0.7)
        for (index, category) in categories.enumerated() {
            let x = left + slot * Double(index) + (slot - barWidth) / 2
            var y = top + plotHeight
            for (seriesIndex, one) in series.enumerated() {
                let value = max(0, one.values[index] ?? 0)
                guard value > 0, maximum > 0 else { continue }
                let h = value / maximum * plotHeight
                y -= h
                svg += "<rect x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(barWidth))\" height=\"\(f(h))\" "
                svg += "fill=\"\(color(seriesIndex))\"><title>\(HTML.escape(category)) · \(HTML.escape(one.name)): "
                svg += "\(NumberText.fixed(value, digits: 2)) \(HTML.escape(unit))</title></rect>"
            }
            svg += text(x + barWidth / 2, top + plotHeight + 16, category, anchor: "middle")
        }
        svg += legend(series.map(\.name), x: legendX, y: top)
        return svg + "</svg>"
    }

    /// Lines over x positions (days), one per series, with a legend; gaps where a value is missing.
    package static func lines(
        title: String, xLabels: [String], series: [Series], unit: String, width: Int = 720, height: Int = 260
    ) -> String {
        let (left, top, plotWidth, plotHeight, legendX) = plotArea(width: width, height: height)
        let maximum = niceCeiling(series.flatMap { $0.values.compactMap { $0 } }.max() ?? 0)
        var svg = open(title: title, width: width, height: height)
        svg += axis(left: left, top: top, plotWidth: plotWidth, plotHeight: plotHeight, maximum: maximum, unit: unit)
        let step = plotWidth / Double(max(1, xLabels.count - 1))
        func point(_ index: Int, _ value: Double) -> (Double, Double) {
            let x = xLabels.count == 1 ? left + plotWidth / 2 : left + step * Double(index)
            return (x, top + plotHeight - (maximum > 0 ? value / maximum * plotHeight : 0))
        }
        for (seriesIndex, one) in series.enumerated() {
            var path = ""
            var pen = false
            for (index, value) in one.values.enumerated() {
                guard let value else {
                    pen = false
                    continue
                }
                let (x, y) = point(index, value)
                path += (pen ? " L" : " M") + "\(f(x)) \(f(y))"
                pen = true
                svg += "<circle cx=\"\(f(x))\" cy=\"\(f(y))\" r=\"2.5\" fill=\"\(color(seriesIndex))\">"
                svg += "<title>\(HTML.escape(xLabels[index])) · \(HTML.escape(one.name)): "
                svg += "\(NumberText.fixed(value, digits: 3)) \(HTML.escape(unit))</title></circle>"
            }
            if !path.isEmpty {
                svg +=
                    "<path d=\"\(path.dropFirst())\" fill=\"none\" stroke=\"\(color(seriesIndex))\" stroke-width=\"2\"/>"
            }
        }
        // At most ~8 x labels, first and last always.
        let every = max(1, Int((Double(xLabels.count) / 8).rounded(.up)))
        let last = xLabels.count - 1
        for (index, label) in xLabels.enumerated()
        where index % every == 0 ? (index == last || last - index >= every / 2 || every == 1) : index == last {
            let (x, _) = point(index, 0)
            svg += text(x, top + plotHeight + 16, String(label.suffix(5)), anchor: "middle")
        }
        svg += legend(series.map(\.name), x: legendX, y: top)
        return svg + "</svg>"
    }

    /// The plot's left edge, top, width and height, and the legend's x, for a chart of this size
    /// (title above, axis labels on the left and below, legend on the right).
    private static func plotArea(
        width: Int, height: Int
    ) -> (left: Double, top: Double, width: Double, height: Double, legendX: Double) {
        let left = 56.0
        let top = 34.0
        let bottom = 36.0
        let legendWidth = 190.0
        return (
            left, top, Double(width) - left - legendWidth - 10, Double(height) - top - bottom,
            Double(width) - legendWidth
        )
    }

    private static func open(title: String, width: Int, height: Int) -> String {
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(width) \(height)\" "
            + "width=\"\(width)\" height=\"\(height)\" role=\"img\" aria-label=\"\(HTML.escape(title))\">"
            + "<title>\(HTML.escape(title))</title>" + text(8, 12, title, anchor: "start", weight: "600")
    }

    private static func axis(
        left: Double, top: Double, plotWidth: Double, plotHeight: Double, maximum: Double, unit: String
    ) -> String {
        var svg = ""
        for tick in 0...4 {
            let value = maximum * Double(tick) / 4
            let y = top + plotHeight - plotHeight * Double(tick) / 4
            svg += "<line x1=\"\(f(left))\" y1=\"\(f(y))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(y))\" "
            svg += "stroke=\"#e3e3e3\"/>"
            svg += text(left - 6, y + 4, NumberText.fixed(value, digits: maximum < 10 ? 2 : 0), anchor: "end")
        }
        svg += text(left, top - 6, unit, anchor: "start")
        return svg
    }

    private static func legend(_ names: [String], x: Double, y: Double) -> String {
        var svg = ""
        for (index, name) in names.enumerated() {
            let rowY = y + Double(index) * 16
            svg += "<rect x=\"\(f(x))\" y=\"\(f(rowY))\" width=\"10\" height=\"10\" fill=\"\(color(index))\"/>"
            svg += text(x + 14, rowY + 9, String(name.prefix(28)), anchor: "start")
        }
        return svg
    }

    private static func text(_ x: Double, _ y: Double, _ value: String, anchor: String, weight: String = "400")
        -> String
    {
        "<text x=\"\(f(x))\" y=\"\(f(y))\" text-anchor=\"\(anchor)\" font-size=\"11\" font-weight=\"\(weight)\" "
            + "fill=\"#333\">\(HTML.escape(value))</text>"
    }

    /// The next "nice" axis maximum (1, 2, 2.5 or 5 × 10ⁿ) at or above `value`.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0, value.isFinite else { return 1 }
        var magnitude = 1.0
        while magnitude * 10 <= value { magnitude *= 10 }
        while magnitude > value { magnitude /= 10 }
        for factor in [1.0, 2, 2.5, 5, 10] where factor * magnitude >= value { return factor * magnitude }
        return 10 * magnitude
    }

    /// Coordinates with one decimal.
    private static func f(_ value: Double) -> String { NumberText.fixed(value, digits: 1).replacingComma() }
}

extension String {
    fileprivate func replacingComma() -> String { filter { $0 != "," } }
}

/// HTML escaping for text and attribute values.
package enum HTML {
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
