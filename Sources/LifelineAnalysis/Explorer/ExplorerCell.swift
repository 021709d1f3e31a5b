/// The mergeable state of one explorer metric in one cell (a store's rollup key: app, day, version,
/// device, OS, app state, metric, subject): what a fold adds each payload's observation to and a
/// query merges before computing an ``ExplorerRow``.
///
/// - ``sketch``: one entry per device-day (its value, its rate, or its histogram's mean), for the
///   percentiles of per-device-day metrics and the insights' bootstrap over device-days;
///   ``deviceDays`` is its count.
/// - ``moments``: the device-days' `(x, y)` pairs (``RatioMoments``), for the pooled mean and its
///   standard error.
/// - ``buckets``: a histogram metric's bucket counts, keyed by exact bounds.
///
/// **Merging** adds everything. It is exactly associative and commutative for ``deviceDays``, the
/// sketch's buckets, count, min and max, and the histogram buckets while a cell holds at most
/// ``maxBuckets`` distinct bucket bounds (MetricKit's layouts are fixed per metric, and both formats
/// share them after ``MetricPayload/withLegacyBucketBounds``); past that, neighbours are merged
/// pairwise (sample counts stay exact, bounds widen), like the store's histogram rollups. The
/// floating-point sums (the sketch's sum, the moments) agree up to rounding.
package struct ExplorerCell: Sendable, Equatable {
    /// The most distinct histogram buckets a cell keeps.
    package static let maxBuckets = 128

    package private(set) var sketch = QuantileSketch()
    package private(set) var moments = RatioMoments()
    /// Sorted by (start, end), one entry per distinct bounds, counts > 0.
    package private(set) var buckets: [BucketDistribution.Bucket] = []

    /// An empty cell.
    package init() {}

    /// A cell of `samples` (invalid ones skipped).
    package init(_ samples: some Sequence<ExplorerSample>) {
        for sample in samples { add(sample) }
    }

    /// Device-days folded.
    package var deviceDays: UInt64 { sketch.count }
    /// Whether nothing was folded.
    package var isEmpty: Bool { sketch.isEmpty }
    /// The merged histogram.
    package var distribution: BucketDistribution { BucketDistribution(buckets) }

    /// One device-day's sample checked and reduced once, to be added to several cells (a fold
    /// adds each observation at two levels): the value the sketch gets, the moments' pair, and a
    /// histogram's buckets in order.
    package struct Prepared: Sendable {
        fileprivate(set) var value: Double
        fileprivate(set) var x: Double
        fileprivate(set) var y: Double
        fileprivate(set) var buckets: [BucketDistribution.Bucket]
    }

    /// `sample` checked and reduced; `nil` for a negative, NaN or infinite value, a rate over hours
    /// that are not positive, or a histogram without a valid bucket.
    package static func prepare(_ sample: ExplorerSample) -> Prepared? {
        switch sample {
        case .value(let value):
            guard value.isFinite, value >= 0 else { return nil }
            return Prepared(value: value, x: 1, y: value, buckets: [])
        case .rate(let numerator, let hours):
            let rate = numerator / hours
            guard numerator.isFinite, numerator >= 0, hours.isFinite, hours > 0, rate.isFinite else { return nil }
            return Prepared(value: rate, x: hours, y: numerator, buckets: [])
        case .histogram(let raw):
            let isValid = { (bucket: BucketDistribution.Bucket) in
                bucket.start.isFinite && bucket.end.isFinite && bucket.start >= 0 && bucket.end >= bucket.start
            }
            // The extractor's buckets are valid and canonical already: no copy.
            let incoming =
                raw.allSatisfy(isValid) && BucketDistribution.isCanonical(raw)
                ? raw : BucketDistribution(raw.filter(isValid)).buckets
            var samples = 0.0
            var total = 0.0
            for bucket in incoming {
                samples += Double(bucket.count)
                total += (bucket.start + bucket.end) / 2 * Double(bucket.count)
            }
            let mean = total / samples
            guard samples > 0, total.isFinite, mean.isFinite else { return nil }
            return Prepared(value: mean, x: samples, y: total, buckets: incoming)
        }
    }

    /// Adds one device-day's sample. Returns `false` (and changes nothing) where ``prepare(_:)``
    /// refuses it.
    @discardableResult
    package mutating func add(_ sample: ExplorerSample) -> Bool {
        guard let prepared = Self.prepare(sample) else { return false }
        add(prepared)
        return true
    }

    /// Adds one device-day's prepared sample.
    package mutating func add(_ prepared: Prepared) {
        sketch.add(prepared.value)
        moments.add(x: prepared.x, y: prepared.y)
        if buckets.isEmpty, prepared.buckets.count <= Self.maxBuckets {
            // A new cell takes the sample's canonical buckets as they are (shared storage).
            buckets = prepared.buckets
        } else if !prepared.buckets.isEmpty, !Self.addInPlace(prepared.buckets, to: &buckets) {
            buckets = Self.coarsen(Self.mergeBuckets(buckets, prepared.buckets))
        }
    }

    /// Adds everything of `other`.
    package mutating func merge(_ other: ExplorerCell) {
        sketch.merge(other.sketch)
        moments.merge(other.moments)
        merge(buckets: other.buckets)
    }

    /// Adds a decoded cell's parts (``merge(decoding:)``), its sketch still sparse.
    mutating func merge(
        sketch other: QuantileSketch.Sparse, moments otherMoments: RatioMoments,
        buckets otherBuckets: [BucketDistribution.Bucket]
    ) {
        sketch.merge(other)
        moments.merge(otherMoments)
        merge(buckets: otherBuckets)
    }

    private mutating func merge(buckets incoming: [BucketDistribution.Bucket]) {
        if !incoming.isEmpty, !Self.addInPlace(incoming, to: &buckets) {
            buckets = Self.coarsen(Self.mergeBuckets(buckets, incoming))
        }
    }

    /// This cell merged with `other`.
    package func merging(_ other: ExplorerCell) -> ExplorerCell {
        var copy = self
        copy.merge(other)
        return copy
    }

    /// Adds `incoming`'s counts to `buckets` in place when every bound of `incoming` is already
    /// there (a metric's layout is fixed, so once a cell has seen its buckets nearly every sample
    /// is such), sparing the merge its new array; returns `false`, changing nothing, otherwise.
    /// Both sorted, as ``mergeBuckets(_:_:)`` takes them; the result is the merge's.
    package static func addInPlace(
        _ incoming: [BucketDistribution.Bucket], to buckets: inout [BucketDistribution.Bucket]
    ) -> Bool {
        guard incoming.count <= buckets.count else { return false }
        // Checked first, then added: a missing bound changes nothing.
        var i = 0
        for bucket in incoming {
            while i < buckets.count, (buckets[i].start, buckets[i].end) < (bucket.start, bucket.end) { i += 1 }
            guard i < buckets.count, buckets[i].start == bucket.start, buckets[i].end == bucket.end else {
                return false
            }
            i += 1
        }
        i = 0
        for bucket in incoming {
            while buckets[i].start != bucket.start || buckets[i].end != bucket.end { i += 1 }
            buckets[i].count.addSaturating(bucket.count)
            i += 1
        }
        return true
    }

    /// Linear merge of two sorted bucket lists, counts of equal bounds added (saturating).
    package static func mergeBuckets(
        _ x: [BucketDistribution.Bucket], _ y: [BucketDistribution.Bucket]
    ) -> [BucketDistribution.Bucket] {
        var merged: [BucketDistribution.Bucket] = []
        merged.reserveCapacity(x.count + y.count)
        var i = 0
        var j = 0
        while i < x.count || j < y.count {
            if j == y.count || (i < x.count && (x[i].start, x[i].end) < (y[j].start, y[j].end)) {
                merged.append(x[i])
                i += 1
            } else if i == x.count || (y[j].start, y[j].end) < (x[i].start, x[i].end) {
                merged.append(y[j])
                j += 1
            } else {
                var bucket = x[i]
                bucket.count.addSaturating(y[j].count)
                merged.append(bucket)
                i += 1
                j += 1
            }
        }
        return merged
    }

    /// Halves a list longer than ``maxBuckets`` until it fits by merging neighbours pairwise (start
    /// of the first, the larger end, summed count), then re-sorts and merges equal bounds. The
    /// rule of the SQLite store's rollup buckets too (`RollupBlob.coarsen`), and PostgreSQL's.
    package static func coarsen(_ buckets: [BucketDistribution.Bucket]) -> [BucketDistribution.Bucket] {
        var buckets = buckets
        while buckets.count > maxBuckets {
            var halved: [BucketDistribution.Bucket] = []
            halved.reserveCapacity(buckets.count / 2 + 1)
            var index = 0
            while index < buckets.count {
                var bucket = buckets[index]
                if index + 1 < buckets.count {
                    bucket.end = Swift.max(bucket.end, buckets[index + 1].end)
                    bucket.count.addSaturating(buckets[index + 1].count)
                }
                halved.append(bucket)
                index += 2
            }
            buckets = BucketDistribution(halved).buckets
        }
        return buckets
    }

    /// Rebuilds a cell from checked parts (decoding).
    init(sketch: QuantileSketch, moments: RatioMoments, checkedBuckets: [BucketDistribution.Bucket]) {
        self.sketch = sketch
        self.moments = moments
        buckets = checkedBuckets
    }
}

extension ExplorerCell.Prepared {
    /// Appends this sample's bytes (``ExplorerPendingRow``): its pair and buckets, each number as
    /// a cell's encoding writes it (a varint for a whole number below 2^53 or whole seconds or
    /// milliseconds as hours, else its 8 bytes),
    /// but a negative zero as its 8 bytes, so ``read(_:)`` gives back the same bits. The value is
    /// not written: ``prepare(_:)`` makes it `y / x` in every case, and ``read(_:)`` divides the
    /// same numbers again.
    func append(to out: inout [UInt8]) {
        Self.writeNumber(x, into: &out)
        Self.writeNumber(y, into: &out)
        ByteWriter.varint(UInt64(buckets.count), into: &out)
        for bucket in buckets {
            Self.writeNumber(bucket.start, into: &out)
            Self.writeNumber(bucket.end, into: &out)
            ByteWriter.varint(ByteWriter.zigzag(bucket.count), into: &out)
        }
    }

    /// Whether the cell ``ExplorerCell/add(_:)`` makes of this sample alone encodes as one
    /// device-day (versions 2–4): ``ExplorerCell/encoded()``'s condition for that cell, whose moments
    /// are the pair's and whose sketch holds ``value`` alone.
    var encodesAlone: Bool {
        ExplorerCell.isDeviceDayPair(x: x, y: y) && value == y / x && buckets.count <= ExplorerCell.maxBuckets
    }

    /// The sample ``append(to:)`` wrote.
    static func read(_ reader: inout ByteReader) throws(SketchDecodingError) -> Self {
        let x = try readNumber(&reader)
        let y = try readNumber(&reader)
        let count = try reader.varint()
        guard count <= UInt64(ExplorerCell.maxBuckets) * 64 else { throw .invalid("bucket count") }
        var buckets: [BucketDistribution.Bucket] = []
        buckets.reserveCapacity(Int(count))
        for _ in 0..<Int(count) {
            let start = try readNumber(&reader)
            let end = try readNumber(&reader)
            let n = ByteWriter.unzigzag(try reader.varint())
            buckets.append(BucketDistribution.Bucket(start: start, end: end, count: n))
        }
        return Self(value: y / x, x: x, y: y, buckets: buckets)
    }

    /// A cell's number (``ExplorerCell``'s encoding), except a negative zero, kept as its 8 bytes
    /// (the cell's encoding writes it as the integer 0).
    private static func writeNumber(_ value: Double, into out: inout [UInt8]) {
        guard value == 0, value.sign == .minus else { return ExplorerCell.writeNumber(value, into: &out) }
        ByteWriter.varint(1, into: &out)
        ByteWriter.double(value, into: &out)
    }

    private static func readNumber(_ reader: inout ByteReader) throws(SketchDecodingError) -> Double {
        try ExplorerCell.readNumber(&reader)
    }
}
