/// What one body may still hold across its documents (``DecodeLimits/maxFramesPerBody``,
/// ``DecodeLimits/maxMetricsPerBody``).
struct BodyBudget {
    var frames: Int
    var metrics: Int

    init(frames: Int, metrics: Int) {
        self.frames = frames
        self.metrics = metrics
    }

    init(_ limits: DecodeLimits) {
        self.init(frames: limits.maxFramesPerBody, metrics: limits.maxMetricsPerBody)
    }
}
