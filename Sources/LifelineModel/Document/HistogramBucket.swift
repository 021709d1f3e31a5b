/// One histogram bucket; start and end in the histogram's canonical unit.
package struct HistogramBucket: Sendable, Equatable {
    package var start: Double?
    package var end: Double?
    package var count: Int64

    package init(start: Double?, end: Double?, count: Int64) {
        self.start = start
        self.end = end
        self.count = count
    }
}
