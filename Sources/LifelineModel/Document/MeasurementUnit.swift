/// The canonical unit a measurement string was converted into.
package enum MeasurementUnit: String, Sendable, Equatable, CaseIterable {
    /// Durations, in milliseconds (`"20 sec"`, `"1,530毫秒"`, `"2,717秒"`).
    case milliseconds = "ms"
    /// Sizes, in bytes (`"200,000 kB"`, `"1,106,818千字节"`, `"2,000 byte"`).
    case bytes = "bytes"
    /// CPU instructions (`"100 kiloinstructions"` → 100,000).
    case instructions = "instructions"
    /// Ratio in milliseconds per second (`"50 ms per s"`).
    case millisecondsPerSecond = "ms_per_s"
    /// Average pixel luminance (`"50 apl"`).
    case apl = "apl"
    /// Cellular signal bars (`"1 bars"`).
    case bars = "bars"
    /// A plain number without a unit.
    case count = "count"
    /// Percent (`"12 %"`).
    case percent = "percent"
}
