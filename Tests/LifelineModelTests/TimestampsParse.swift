import LifelineModel
import Testing

@Suite("Timestamps parse by hand")
struct TimestampsParse {
    @Test(
        "MetricKit spellings become epoch seconds",
        arguments: [
            ("2019-10-21 07:00:00 +0000", Int64(1_571_641_200)),
            ("2019-10-21 08:00:00 +0100", 1_571_641_200),
            ("2019-10-21 02:00:00 -0500", 1_571_641_200),
            ("2022-11-14 23:59:00", 1_668_470_340),
            ("2024-02-29 12:00:00 +0000", 1_709_208_000),
            ("1970-01-01 00:00:00 +0000", 0),
            ("2019-10-21T07:00:00Z", 1_571_641_200),
        ])
    func parses(_ raw: String, _ epoch: Int64) {
        #expect(Timestamp.parse(raw) == Timestamp(epochSeconds: epoch, raw: raw))
    }

    @Test(
        "anything else keeps its raw text with no epoch",
        arguments: [
            "", "yesterday", "2019-13-01 00:00:00", "2023-02-29 00:00:00", "2019-10-21", "2019-10-21 07:00:00 +00x0",
        ])
    func refuses(_ raw: String) {
        #expect(Timestamp.parse(raw) == Timestamp(epochSeconds: nil, raw: raw))
    }
}
