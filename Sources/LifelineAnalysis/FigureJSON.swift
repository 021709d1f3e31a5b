import Foundation
import LifelineModel

/// The one JSON encoding of every figure: the rows of the aggregate endpoints and the same rows
/// in `lifeline report --format json`, so a figure has one name and one value everywhere (a test
/// compares the two). Keys are snake_case; a figure that cannot be computed is `null`, never left
/// out; grouping keys appear only for the dimensions grouped by.
package enum FigureJSON {
    package struct Window: Encodable, Sendable {
        var from: String
        var to: String
        var days: Int
        package init(_ range: DayRange) {
            from = range.from.string
            to = range.to.string
            days = range.dayCount
        }
    }

    /// `{"app", "window", "group_by", "<rows key>": [...]}` and extra top-level figures.
    package struct Envelope<Row: Encodable & Sendable>: Encodable, Sendable {
        var app: String
        var window: Window
        var groupBy: [String]
        var rowsKey: String
        var rows: [Row]
        /// A page of a longer answer (the API's row cap): `truncated`, and `next_cursor` when rows
        /// are left. Nil: no paging keys (the report's JSON).
        var page: (truncated: Bool, nextCursor: String?)?

        package init(
            _ scope: Scope, rowsKey: String = "rows", rows: [Row], page: (truncated: Bool, nextCursor: String?)? = nil
        ) {
            app = scope.app
            window = Window(scope.days)
            groupBy = scope.groupBy.map(\.rawValue)
            self.rowsKey = rowsKey
            self.rows = rows
            self.page = page
        }

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try c.encode(app, forKey: "app")
            try c.encode(window, forKey: "window")
            try c.encode(groupBy, forKey: "group_by")
            try c.encode(rows, forKey: DynamicKey(rowsKey))
            if let page {
                try c.encode(page.truncated, forKey: "truncated")
                if let next = page.nextCursor { try c.encode(next, forKey: "next_cursor") }
            }
        }
    }

    package struct DynamicKey: CodingKey, ExpressibleByStringLiteral {
        package var stringValue: String
        package var intValue: Int? { nil }
        package init(_ string: String) { stringValue = string }
        package init(stringLiteral value: String) { stringValue = value }
        package init?(stringValue: String) { self.stringValue = stringValue }
        package init?(intValue: Int) { nil }
    }

    /// Encodes the grouping keys of a row.
    package static func encode(_ key: GroupKey, into c: inout KeyedEncodingContainer<DynamicKey>) throws {
        for dimension in GroupDimension.allCases where dimension != .appState {
            if let value = key[dimension] { try c.encode(value, forKey: DynamicKey(dimension.rawValue)) }
        }
        if let state = key.appState {
            try c.encode(state.domain, forKey: "app_state_domain")
            try c.encode(state.label, forKey: "app_state_label")
            try c.encode(MetadataObject(json: state.metadata), forKey: "app_state_metadata")
        }
    }

    /// A state's stable metadata (canonical JSON text of an object of strings, numbers and
    /// booleans) encoded back as a JSON object.
    struct MetadataObject: Encodable {
        var json: String

        enum Value: Codable {
            case bool(Bool)
            case number(Double)
            case string(String)

            init(from decoder: any Decoder) throws {
                let c = try decoder.singleValueContainer()
                if let value = try? c.decode(Bool.self) {
                    self = .bool(value)
                } else if let value = try? c.decode(Double.self) {
                    self = .number(value)
                } else {
                    self = .string(try c.decode(String.self))
                }
            }

            func encode(to encoder: any Encoder) throws {
                var c = encoder.singleValueContainer()
                switch self {
                case .bool(let value): try c.encode(value)
                case .number(let value): try c.encode(value)
                case .string(let value): try c.encode(value)
                }
            }
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            let object = (try? JSONDecoder().decode([String: Value].self, from: Data(json.utf8))) ?? [:]
            for key in object.keys.sorted() {
                if let value = object[key] { try c.encode(value, forKey: DynamicKey(key)) }
            }
        }
    }

    package struct ExitRow: Encodable, Sendable {
        var figure: ExitFigure
        package init(_ figure: ExitFigure) { self.figure = figure }
        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try FigureJSON.encode(figure.key, into: &c)
            try c.encode(figure.state.rawValue, forKey: "state")
            try c.encode(figure.reason, forKey: "reason")
            try c.encode(figure.count, forKey: "count")
            try c.encode(figure.deviceDays, forKey: "device_days")
            try c.encode(figure.perThousandDeviceDays, forKey: "per_1000_device_days")
            try c.encode(figure.perHour, forKey: "per_hour")
        }
    }

    package struct SignpostRowBody: Encodable, Sendable {
        var row: SignpostRow
        package init(_ row: SignpostRow) { self.row = row }
        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try FigureJSON.encode(row.key, into: &c)
            try c.encode(row.category, forKey: "category")
            try c.encode(row.name, forKey: "name")
            try c.encode(row.count, forKey: "count")
        }
    }

    package struct HandlerRow: Encodable, Sendable {
        var figure: HandlerFigure
        package init(_ figure: HandlerFigure) { self.figure = figure }
        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try FigureJSON.encode(figure.key, into: &c)
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

    package struct RestorationRow: Encodable, Sendable {
        var figure: RestorationFigure
        package init(_ figure: RestorationFigure) { self.figure = figure }
        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try FigureJSON.encode(figure.key, into: &c)
            try c.encode(figure.attempts, forKey: "attempts")
            try c.encode(figure.failures, forKey: "failures")
            try c.encode(figure.errorRate, forKey: "error_rate")
            try c.encode(figure.p50Milliseconds, forKey: "p50_ms")
            try c.encode(figure.p95Milliseconds, forKey: "p95_ms")
            try c.encode(figure.durationSamples, forKey: "duration_samples")
        }
    }

    package struct PercentileRow: Encodable, Sendable {
        var name: String
        var figure: PercentileFigure
        package init(name: String, figure: PercentileFigure) {
            self.name = name
            self.figure = figure
        }
        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try FigureJSON.encode(figure.key, into: &c)
            try c.encode(name, forKey: "metric")
            try c.encode(figure.samples, forKey: "samples")
            try c.encode(figure.p50, forKey: "p50_ms")
            try c.encode(figure.p90, forKey: "p90_ms")
            try c.encode(figure.p95, forKey: "p95_ms")
            try c.encode(figure.p99, forKey: "p99_ms")
        }
    }

    package struct Frame: Encodable, Sendable {
        var binaryName: String?
        var binaryUUID: String?
        var address: String
        var offset: String
        var symbols: [FrameSymbol]
        init(_ frame: SampleFrame) {
            binaryName = frame.binaryName
            binaryUUID = frame.binaryUUID
            address = "0x" + String(frame.address, radix: 16)
            offset = "0x" + String(frame.offset, radix: 16)
            symbols = frame.symbols
        }
        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try c.encode(binaryName, forKey: "binary_name")
            try c.encode(binaryUUID, forKey: "binary_uuid")
            try c.encode(address, forKey: "address")
            try c.encode(offset, forKey: "offset")
            try c.encode(symbols.first?.function, forKey: "function")
            try c.encode(symbols.first?.file, forKey: "file")
            try c.encode(symbols.first?.line, forKey: "line")
            try c.encode(symbols.dropFirst().map(Inlined.init), forKey: "inlined")
        }

        struct Inlined: Encodable {
            var symbol: FrameSymbol
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: DynamicKey.self)
                try c.encode(symbol.function, forKey: "function")
                try c.encode(symbol.file, forKey: "file")
                try c.encode(symbol.line, forKey: "line")
            }
        }
    }

    package struct CrashRow: Encodable, Sendable {
        var figure: CrashFigure
        var withStack: Bool
        package init(figure: CrashFigure, withStack: Bool) {
            self.figure = figure
            self.withStack = withStack
        }
        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            let g = figure.group
            try c.encode(g.id, forKey: "id")
            try c.encode(g.fingerprint, forKey: "fingerprint")
            try c.encode(figure.kind.rawValue, forKey: "kind")
            try c.encode(g.groupKind, forKey: "group_kind")
            try c.encode(g.title, forKey: "title")
            try c.encode(figure.count, forKey: "count")
            try c.encode(figure.countByVersion, forKey: "count_by_version")
            try c.encode(UTCDay(epochSeconds: g.firstSeen).string, forKey: "first_seen")
            try c.encode(UTCDay(epochSeconds: g.lastSeen).string, forKey: "last_seen")
            try c.encode(g.exceptionType, forKey: "exception_type")
            try c.encode(figure.exceptionName, forKey: "exception_name")
            try c.encode(g.signal, forKey: "signal")
            try c.encode(figure.signalName, forKey: "signal_name")
            try c.encode(figure.isWatchdog, forKey: "watchdog")
            if withStack {
                try c.encode(g.terminationReason, forKey: "termination_reason")
                try c.encode(g.terminationCategory, forKey: "termination_category")
                try c.encode(g.exceptionMessage, forKey: "exception_message")
                try c.encode(g.pid, forKey: "pid")
                try c.encode(g.signpostData.map(RawJSON.init), forKey: "signpost_data")
                try c.encode(g.sampleFrames.map(Frame.init), forKey: "sample_stack")
            } else {
                try c.encode(g.sampleFrames.prefix(3).map(Frame.init), forKey: "sample_stack")
            }
        }
    }

    /// A JSON value stored as its text (validated when written), re-emitted as JSON.
    struct RawJSON: Encodable {
        var text: String

        indirect enum Value: Codable {
            case null
            case bool(Bool)
            case number(Double)
            case string(String)
            case array([Value])
            case object([String: Value])

            init(from decoder: any Decoder) throws {
                let c = try decoder.singleValueContainer()
                if c.decodeNil() {
                    self = .null
                } else if let value = try? c.decode(Bool.self) {
                    self = .bool(value)
                } else if let value = try? c.decode(Double.self) {
                    self = .number(value)
                } else if let value = try? c.decode(String.self) {
                    self = .string(value)
                } else if let value = try? c.decode([Value].self) {
                    self = .array(value)
                } else {
                    self = .object(try c.decode([String: Value].self))
                }
            }

            func encode(to encoder: any Encoder) throws {
                var c = encoder.singleValueContainer()
                switch self {
                case .null: try c.encodeNil()
                case .bool(let value): try c.encode(value)
                case .number(let value): try c.encode(value)
                case .string(let value): try c.encode(value)
                case .array(let value): try c.encode(value)
                case .object(let value): try c.encode(value)
                }
            }
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode((try? JSONDecoder().decode(Value.self, from: Data(text.utf8))) ?? .null)
        }
    }

    /// `GET /v1/apps` and the report's app line.
    package struct AppsBody: Encodable, Sendable {
        var apps: [AppBody]
        package init(_ apps: [AppInfo]) { self.apps = apps.map(AppBody.init) }
    }

    package struct AppBody: Encodable, Sendable {
        var info: AppInfo
        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try c.encode(info.bundleID, forKey: "bundle_id")
            try c.encode(info.metricPayloads, forKey: "metric_payloads")
            try c.encode(info.diagnosticPayloads, forKey: "diagnostic_payloads")
            try c.encode(info.firstDay, forKey: "first_day")
            try c.encode(info.lastDay, forKey: "last_day")
        }
    }

    /// `GET /v1/apps/{bundleId}/summary`: the headline figures of a scope.
    package struct SummaryBody: Encodable, Sendable {
        var scope: Scope
        var figure: SummaryFigure
        package init(_ scope: Scope, _ figure: SummaryFigure) {
            self.scope = scope
            self.figure = figure
        }
        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: DynamicKey.self)
            try c.encode(scope.app, forKey: "app")
            try c.encode(Window(scope.days), forKey: "window")
            try c.encode(figure.deviceDays, forKey: "device_days")
            try c.encode(figure.foregroundExits, forKey: "foreground_exits")
            try c.encode(figure.backgroundExits, forKey: "background_exits")
            try c.encode(figure.foregroundExitsPerThousandDeviceDays, forKey: "foreground_exits_per_1000_device_days")
            try c.encode(figure.backgroundExitsPerThousandDeviceDays, forKey: "background_exits_per_1000_device_days")
            try c.encode(figure.restorationAttempts, forKey: "restoration_attempts")
            try c.encode(figure.restorationFailures, forKey: "restoration_failures")
            try c.encode(figure.restorationErrorRate, forKey: "restoration_error_rate")
            try c.encode(figure.flaggedHandlers, forKey: "flagged_handlers")
            try c.encode(
                Dictionary(uniqueKeysWithValues: figure.diagnostics.map { ($0.key.rawValue, $0.value) }),
                forKey: "diagnostics")
            try c.encode(figure.crashGroups, forKey: "crash_groups")
        }
    }
}
