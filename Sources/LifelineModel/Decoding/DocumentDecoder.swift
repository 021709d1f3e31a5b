/// Turns the tokens of one MetricKit document into model values.
///
/// Lenient by design: unknown keys are skipped, a value of the wrong JSON type is treated as absent,
/// and an unparseable measurement is kept as raw text and counted in ``unparsed``.
///
/// Bounded by design: every loop is linear in the tokens it reads, no string is copied per leaf
/// beyond ``DecodeLimits/maxNameBytes``, counts of metrics, exits, signposts, buckets and frames
/// are capped (``DecodeLimits``), and implausible values (``ValueBounds``) are dropped and counted
/// in ``dropped``.
struct DocumentDecoder {
    let tape: JSONTape
    let limits: DecodeLimits
    /// Which document of the body this is (1-based), for messages.
    let document: Int
    /// Measurement strings that could not be parsed so far.
    var unparsed = 0
    /// Values dropped as implausible or for an over-long name so far.
    var dropped = 0
    /// Frames the body may still hold (shared by the documents of one body).
    var framesRemaining: Int
    /// Metrics (scalars + histograms) the body may still hold (shared by its documents).
    var metricsRemaining: Int
    /// The last unit symbol of a measurement object and how it read (``unit(_:)``): a report
    /// repeats a few symbols hundreds of times.
    private var lastUnit: (symbol: [UInt8], parsed: MeasurementParser.Parsed?)?

    init(tape: JSONTape, limits: DecodeLimits, document: Int = 1, budget: BodyBudget? = nil) {
        self.tape = tape
        self.limits = limits
        self.document = document
        self.framesRemaining = budget?.frames ?? limits.maxFramesPerBody
        self.metricsRemaining = budget?.metrics ?? limits.maxMetricsPerBody
    }

    /// What the rest of the body may still hold, after this document.
    var budget: BodyBudget { BodyBudget(frames: framesRemaining, metrics: metricsRemaining) }

    /// A limit error naming this document.
    func limitError(_ message: String, at t: Int) -> DecodeError {
        DecodeError(
            code: .limitExceeded, message: "document \(document): \(message)", offset: tape.byteRange(t).lowerBound)
    }

    /// Whether the string token `t` fits ``DecodeLimits/maxNameBytes`` (counts a drop when not).
    mutating func nameFits(_ t: Int, extra: Int = 0) -> Bool {
        if tape.rawLength(t) + extra <= limits.maxNameBytes { return true }
        dropped += 1
        return false
    }

    // MARK: - Values

    /// A measurement from a string token (or a bare number, read as a count); `nil` for other kinds.
    mutating func measurement(_ t: Int) -> Measurement? {
        measurementAndFactor(t)?.measurement
    }

    /// Like ``measurement(_:)``, also returning the factor applied to the written number.
    mutating func measurementAndFactor(_ t: Int) -> (measurement: Measurement, factor: Double)? {
        switch tape.kind(t) {
        case .string:
            let raw = tape.string(t) ?? ""
            let parsed: MeasurementParser.Parsed?
            if tape.isEscaped(t) {
                var copy = raw
                parsed = copy.withUTF8 { MeasurementParser.parse(UnsafeRawBufferPointer($0)) }
            } else {
                parsed = MeasurementParser.parse(tape.rawStringBytes(t))
            }
            if parsed == nil { unparsed += 1 }
            if let parsed, !ValueBounds.isPlausible(parsed.value, unit: parsed.unit) {
                dropped += 1
                return nil
            }
            return (Measurement(value: parsed?.value, unit: parsed?.unit, raw: raw), parsed?.factor ?? 1)
        case .number:
            guard let value = tape.double(t), ValueBounds.isPlausible(value, unit: .count) else {
                dropped += 1
                return nil
            }
            let raw = String(decoding: tape.bytes[tape.byteRange(t)], as: UTF8.self)
            return (Measurement(value: value, unit: .count, raw: raw), 1)
        case .object:
            return objectMeasurement(t)
        default:
            return nil
        }
    }

    /// An iOS 27 measurement object, `{"value": 1491, "unit": "s"}`: the number times the factor of
    /// its unit symbol (read by ``MeasurementParser``, so both formats normalise alike); kept as
    /// `"1491 s"`. No unit: a count.
    mutating func objectMeasurement(_ t: Int) -> (measurement: Measurement, factor: Double)? {
        guard let object = readObject(t) else { return nil }
        let numberText = String(decoding: tape.bytes[tape.byteRange(object.numberToken)], as: UTF8.self)
        let raw = object.unitToken.map { numberText + " " + (tape.string($0) ?? "") } ?? numberText
        switch object.reading {
        case .value(let value, let unit, let factor): return (Measurement(value: value, unit: unit, raw: raw), factor)
        case .unparsed: return (Measurement(value: nil, unit: nil, raw: raw), 1)
        case .implausible: return nil
        }
    }

    /// ``objectMeasurement(_:)``'s value and unit, counted alike, without the raw text (histogram
    /// bucket bounds: two per bucket, and the strings were most of an iOS 27 report's decoding).
    mutating func objectValue(_ t: Int) -> (value: Double, unit: MeasurementUnit)? {
        guard case .value(let value, let unit, _) = readObject(t)?.reading else { return nil }
        return (value, unit)
    }

    /// How a measurement object reads.
    private enum ObjectReading {
        /// The number times its unit's factor (a count without a unit).
        case value(Double, MeasurementUnit, factor: Double)
        /// A unit symbol that is no known unit (counted in ``unparsed``).
        case unparsed
        /// A value outside ``ValueBounds`` (counted in ``dropped``).
        case implausible
    }

    /// A measurement object's number token, its unit symbol's token (`nil` without a non-empty
    /// symbol that fits ``DecodeLimits/maxNameBytes``) and how it reads, counted once here; `nil`
    /// without a number (an unreadable one counts a drop).
    private mutating func readObject(_ t: Int) -> (numberToken: Int, unitToken: Int?, reading: ObjectReading)? {
        guard let valueToken = tape.member(t, "value"), tape.kind(valueToken) == .number else { return nil }
        guard let number = tape.double(valueToken) else {
            dropped += 1
            return nil
        }
        guard let unitToken = tape.member(t, "unit"), tape.kind(unitToken) == .string, nameFits(unitToken),
            tape.rawLength(unitToken) > 0
        else {
            guard ValueBounds.isPlausible(number, unit: .count) else {
                dropped += 1
                return (valueToken, nil, .implausible)
            }
            return (valueToken, nil, .value(number, .count, factor: 1))
        }
        let symbol =
            tape.isEscaped(unitToken)
            ? tape.unescapedBytes(unitToken).withUnsafeBytes { unit($0) }
            : unit(tape.rawStringBytes(unitToken))
        guard let symbol else {
            unparsed += 1
            return (valueToken, unitToken, .unparsed)
        }
        let value = number * symbol.factor
        guard ValueBounds.isPlausible(value, unit: symbol.unit) else {
            dropped += 1
            return (valueToken, unitToken, .implausible)
        }
        return (valueToken, unitToken, .value(value, symbol.unit, factor: symbol.factor))
    }

    /// `"1 "` followed by `symbol`, read by ``MeasurementParser`` (its unit and factor); the last
    /// symbol's answer is reused.
    private mutating func unit(_ symbol: UnsafeRawBufferPointer) -> MeasurementParser.Parsed? {
        if let lastUnit, lastUnit.symbol.elementsEqual(symbol) { return lastUnit.parsed }
        let parsed = withUnsafeTemporaryAllocation(byteCount: symbol.count + 2, alignment: 1) { probe in
            probe[0] = UInt8(ascii: "1")
            probe[1] = UInt8(ascii: " ")
            UnsafeMutableRawBufferPointer(rebasing: probe[2...]).copyMemory(from: symbol)
            return MeasurementParser.parse(UnsafeRawBufferPointer(probe))
        }
        lastUnit = (Array(symbol), parsed)
        return parsed
    }

    /// A measurement value without keeping the raw text (histogram bucket bounds).
    mutating func measurementValue(_ t: Int) -> (value: Double, unit: MeasurementUnit)? {
        switch tape.kind(t) {
        case .string:
            let parsed: MeasurementParser.Parsed?
            if tape.isEscaped(t) {
                parsed = tape.unescapedBytes(t).withUnsafeBytes { MeasurementParser.parse($0) }
            } else {
                parsed = MeasurementParser.parse(tape.rawStringBytes(t))
            }
            guard let parsed else {
                unparsed += 1
                return nil
            }
            guard ValueBounds.isPlausible(parsed.value, unit: parsed.unit) else {
                dropped += 1
                return nil
            }
            return (parsed.value, parsed.unit)
        case .number:
            guard let value = tape.double(t) else { return nil }
            guard ValueBounds.isPlausible(value, unit: .count) else {
                dropped += 1
                return nil
            }
            return (value, .count)
        case .object:
            return objectValue(t)
        default:
            return nil
        }
    }

    /// A timestamp from a string token; `nil` for other kinds. A time outside
    /// ``ValueBounds/isPlausibleEpoch(_:)`` is kept as raw text only (counted as dropped).
    mutating func timestamp(_ t: Int) -> Timestamp? {
        guard tape.kind(t) == .string, nameFits(t) else { return nil }
        guard let raw = tape.string(t) else { return nil }
        var epoch: Int64?
        if tape.isEscaped(t) {
            var copy = raw
            epoch = copy.withUTF8 { TimestampParser.epochSeconds(UnsafeRawBufferPointer($0)) }
        } else {
            epoch = TimestampParser.epochSeconds(tape.rawStringBytes(t))
        }
        if let seconds = epoch, !ValueBounds.isPlausibleEpoch(seconds) {
            dropped += 1
            epoch = nil
        }
        return Timestamp(epochSeconds: epoch, raw: raw)
    }

    /// Applies one `metaData` / `diagnosticMetaData` member to `meta`; `false` when the key is not a device field.
    func applyMetaField(key k: Int, value v: Int, to meta: inout DeviceMeta) -> Bool {
        if tape.keyEquals(k, "appBuildVersion") {
            meta.appBuildVersion = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "osVersion") {
            meta.osVersion = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "deviceType") {
            meta.deviceType = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "regionFormat") {
            meta.regionFormat = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "platformArchitecture") {
            meta.platformArchitecture = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "bundleIdentifier") {
            meta.bundleIdentifier = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "appVersion") {
            meta.appVersion = tape.nonEmptyString(v)
        } else if tape.keyEquals(k, "isTestFlightApp") {
            meta.isTestFlightApp = tape.bool(v)
        } else if tape.keyEquals(k, "lowPowerModeEnabled") {
            meta.lowPowerModeEnabled = tape.bool(v)
        } else if tape.keyEquals(k, "pid") {
            meta.pid = tape.int64(v)
        } else {
            return false
        }
        return true
    }
}
