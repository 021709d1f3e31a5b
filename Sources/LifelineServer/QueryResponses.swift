import LifelineAnalysis
import LifelineModel

/// JSON bodies of the aggregate endpoints. Keys are snake_case; a figure that cannot be
/// computed is `null`, never left out; grouping keys appear only for the dimensions grouped by.
enum QueryResponses {
    struct Window: Encodable {
        var from: String
        var to: String
        var days: Int
        init(_ range: DayRange) {
            from = range.from
            to = range.to
            days = range.dayCount
        }
    }

    /// `{"app", "window", "group_by", "<rows key>": [...]}` and extra top-level figures.
    struct Envelope<Row: Encodable>: Encodable {
        var app: String
        var window: Window
        var groupBy: [String]
        var rowsKey: String
        var rows: [Row]

        init(_ scope: Scope, rowsKey: String = "rows", rows: [Row]) {
            app = scope.app
            window = Window(scope.days)
            groupBy = scope.groupBy.map(\.rawValue)
            self.rowsKey = rowsKey
            self.rows = rows
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try c.encode(app, forKey: "app")
            try c.encode(window, forKey: "window")
            try c.encode(groupBy, forKey: "group_by")
            try c.encode(rows, forKey: DynamicKey(rowsKey))
        }
    }

    struct DynamicKey: CodingKey, ExpressibleByStringLiteral {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init(stringLiteral value: String) { stringValue = value }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Encodes the grouping keys of a row.
    static func encode(_ key: GroupKey, into c: inout KeyedEncodingContainer<DynamicKey>) throws {
        for dimension in GroupDimension.allCases {
            if let value = key[dimension] { try c.encode(value, forKey: DynamicKey(dimension.rawValue)) }
        }
    }

    struct ExitRow: Encodable {
        var figure: ExitFigure
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try QueryResponses.encode(figure.key, into: &c)
            try c.encode(figure.state.rawValue, forKey: "state")
            try c.encode(figure.reason, forKey: "reason")
            try c.encode(figure.count, forKey: "count")
            try c.encode(figure.deviceDays, forKey: "device_days")
            try c.encode(figure.perThousandDeviceDays, forKey: "per_1000_device_days")
            try c.encode(figure.perHour, forKey: "per_hour")
        }
    }

    struct SignpostRowBody: Encodable {
        var row: SignpostRow
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try QueryResponses.encode(row.key, into: &c)
            try c.encode(row.category, forKey: "category")
            try c.encode(row.name, forKey: "name")
            try c.encode(row.count, forKey: "count")
        }
    }

    struct HandlerRow: Encodable {
        var figure: HandlerFigure
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try QueryResponses.encode(figure.key, into: &c)
            try c.encode(figure.category, forKey: "category")
            try c.encode(figure.handler, forKey: "handler")
            try c.encode(figure.entered, forKey: "entered")
            try c.encode(figure.exited, forKey: "exited")
            try c.encode(figure.imbalance, forKey: "imbalance")
            try c.encode(figure.imbalanceRatio, forKey: "imbalance_ratio")
            try c.encode(figure.flagged, forKey: "flagged")
            try c.encode(figure.assertionTimeoutExits, forKey: "background_task_assertion_timeout_exits")
        }
    }

    struct RestorationRow: Encodable {
        var figure: RestorationFigure
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try QueryResponses.encode(figure.key, into: &c)
            try c.encode(figure.attempts, forKey: "attempts")
            try c.encode(figure.failures, forKey: "failures")
            try c.encode(figure.errorRate, forKey: "error_rate")
            try c.encode(figure.p50Milliseconds, forKey: "p50_ms")
            try c.encode(figure.p95Milliseconds, forKey: "p95_ms")
            try c.encode(figure.durationSamples, forKey: "duration_samples")
        }
    }

    struct PercentileRow: Encodable {
        var name: String
        var figure: PercentileFigure
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try QueryResponses.encode(figure.key, into: &c)
            try c.encode(name, forKey: "metric")
            try c.encode(figure.samples, forKey: "samples")
            try c.encode(figure.p50, forKey: "p50_ms")
            try c.encode(figure.p90, forKey: "p90_ms")
            try c.encode(figure.p95, forKey: "p95_ms")
            try c.encode(figure.p99, forKey: "p99_ms")
        }
    }

    struct Frame: Encodable {
        var binaryName: String?
        var binaryUUID: String?
        var address: String
        var offset: String
        init(_ frame: SampleFrame) {
            binaryName = frame.binaryName
            binaryUUID = frame.binaryUUID
            address = "0x" + String(frame.address, radix: 16)
            offset = "0x" + String(frame.offset, radix: 16)
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try c.encode(binaryName, forKey: "binary_name")
            try c.encode(binaryUUID, forKey: "binary_uuid")
            try c.encode(address, forKey: "address")
            try c.encode(offset, forKey: "offset")
        }
    }

    struct CrashRow: Encodable {
        var figure: CrashFigure
        var withStack: Bool
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            let g = figure.group
            try c.encode(g.id, forKey: "id")
            try c.encode(g.fingerprint, forKey: "fingerprint")
            try c.encode(figure.kind.rawValue, forKey: "kind")
            try c.encode(g.groupKind, forKey: "group_kind")
            try c.encode(g.title, forKey: "title")
            try c.encode(figure.count, forKey: "count")
            try c.encode(figure.countByVersion, forKey: "count_by_version")
            try c.encode(Day.of(epochSeconds: g.firstSeen), forKey: "first_seen")
            try c.encode(Day.of(epochSeconds: g.lastSeen), forKey: "last_seen")
            try c.encode(g.exceptionType, forKey: "exception_type")
            try c.encode(figure.exceptionName, forKey: "exception_name")
            try c.encode(g.signal, forKey: "signal")
            try c.encode(figure.signalName, forKey: "signal_name")
            try c.encode(figure.isWatchdog, forKey: "watchdog")
            if withStack {
                try c.encode(g.terminationReason, forKey: "termination_reason")
                try c.encode(g.sampleFrames.map(Frame.init), forKey: "sample_stack")
            } else {
                try c.encode(g.sampleFrames.prefix(3).map(Frame.init), forKey: "sample_stack")
            }
        }
    }
}
