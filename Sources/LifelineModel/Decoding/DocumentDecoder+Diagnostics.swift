/// Diagnostics and call-stack trees.
extension DocumentDecoder {
    /// The five diagnostic arrays of an `MXDiagnosticPayload`, in the order they are decoded.
    static let diagnosticArrays: [(key: StaticString, kind: DiagnosticKind)] = [
        ("crashDiagnostics", .crash),
        ("hangDiagnostics", .hang),
        ("cpuExceptionDiagnostics", .cpuException),
        ("diskWriteExceptionDiagnostics", .diskWriteException),
        ("appLaunchDiagnostics", .appLaunch),
    ]

    /// Decodes an `MXDiagnosticPayload` object.
    mutating func diagnosticPayload(_ root: Int) throws(DecodeError) -> DiagnosticPayload {
        var payload = DiagnosticPayload(begin: nil, end: nil, diagnostics: [])
        var arrays: [(token: Int, kind: DiagnosticKind, key: StaticString)] = []
        tape.forEachMember(root) { k, v in
            if tape.keyEquals(k, "timeStampBegin") {
                payload.begin = timestamp(v)
            } else if tape.keyEquals(k, "timeStampEnd") {
                payload.end = timestamp(v)
            } else {
                for entry in Self.diagnosticArrays where tape.keyEquals(k, entry.key) {
                    arrays.append((v, entry.kind, entry.key))
                }
            }
        }
        // Decode in a fixed kind order so the output does not depend on key order.
        func rank(_ kind: DiagnosticKind) -> Int {
            Self.diagnosticArrays.firstIndex { $0.kind == kind } ?? Self.diagnosticArrays.count
        }
        arrays.sort { a, b in rank(a.kind) < rank(b.kind) }
        for array in arrays {
            guard tape.kind(array.token) == .array else {
                throw DecodeError(
                    code: .notMetricKit,
                    message: "document \(document): \(array.key) must be an array, found \(tape.kindName(array.token))",
                    offset: tape.byteRange(array.token).lowerBound)
            }
            var failure: DecodeError?
            tape.forEachElement(array.token) { e in
                guard failure == nil else { return }
                guard tape.kind(e) == .object else {
                    failure = DecodeError(
                        code: .notMetricKit,
                        message:
                            "document \(document): \(array.key) elements must be objects, found \(tape.kindName(e))",
                        offset: tape.byteRange(e).lowerBound)
                    return
                }
                do throws(DecodeError) {
                    payload.diagnostics.append(try diagnostic(e, kind: array.kind))
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
        }
        return payload
    }

    /// Decodes one diagnostic object. `kind == nil` (a bare diagnostic) detects the kind from the
    /// metadata: `exceptionType`/`signal`/`terminationReason` → crash, `hangDuration` → hang,
    /// `totalCPUTime` → CPU exception, `writesCaused` → disk write, `launchDuration` → app launch.
    mutating func diagnostic(_ t: Int, kind: DiagnosticKind?) throws(DecodeError) -> Diagnostic {
        var meta = DeviceMeta()
        var version: String?
        var treeToken: Int?
        var exceptionType: Int64?
        var exceptionCode: Int64?
        var signal: Int64?
        var terminationReason: String?
        var virtualMemoryRegionInfo: String?
        var reason: ExceptionReason?
        var measurements: [DiagnosticKind: Measurement] = [:]
        var totalSampledTime: Measurement?
        var terminationCategory: String?
        var sawCrashField = false

        func metadataField(_ k: Int, _ v: Int, _ d: inout DocumentDecoder) -> Bool {
            let tape = d.tape
            if tape.keyEquals(k, "exceptionType") {
                exceptionType = tape.int64(v)
                sawCrashField = true
            } else if tape.keyEquals(k, "exceptionCode") {
                exceptionCode = tape.int64(v) ?? tape.uint64(v).map { Int64(bitPattern: $0) }
                sawCrashField = true
            } else if tape.keyEquals(k, "signal") {
                signal = tape.int64(v)
                sawCrashField = true
            } else if tape.keyEquals(k, "terminationReason") {
                terminationReason = tape.nonEmptyString(v)
                sawCrashField = true
            } else if tape.keyEquals(k, "virtualMemoryRegionInfo") {
                virtualMemoryRegionInfo = tape.nonEmptyString(v)
            } else if tape.keyEquals(k, "exceptionReason") || tape.keyEquals(k, "objectiveCexceptionReason") {
                reason = d.exceptionReason(v)
                sawCrashField = true
            } else if tape.keyEquals(k, "hangDuration") {
                measurements[.hang] = d.measurement(v)
            } else if tape.keyEquals(k, "launchDuration") {
                measurements[.appLaunch] = d.measurement(v)
            } else if tape.keyEquals(k, "totalCPUTime") {
                measurements[.cpuException] = d.measurement(v)
            } else if tape.keyEquals(k, "writesCaused") || tape.keyEquals(k, "totalBytesWritten") {
                measurements[.diskWriteException] = d.measurement(v)
            } else if tape.keyEquals(k, "terminationCategory") {
                if tape.kind(v) == .string, d.nameFits(v) { terminationCategory = tape.nonEmptyString(v) }
                sawCrashField = true
            } else if tape.keyEquals(k, "totalSampledTime") {
                totalSampledTime = d.measurement(v)
            } else {
                return false
            }
            return true
        }

        var d = self
        tape.forEachMember(t) { k, v in
            if tape.keyEquals(k, "version") {
                version = tape.nonEmptyString(v)
            } else if tape.keyEquals(k, "callStackTree") {
                treeToken = v
            } else if tape.keyEquals(k, "diagnosticMetaData") {
                tape.forEachMember(v) { mk, mv in
                    if !d.applyMetaField(key: mk, value: mv, to: &meta) { _ = metadataField(mk, mv, &d) }
                }
            } else {
                _ = metadataField(k, v, &d)  // tolerate fields placed beside the metadata
            }
        }
        self.unparsed = d.unparsed
        self.dropped = d.dropped

        let resolvedKind: DiagnosticKind
        if let kind {
            resolvedKind = kind
        } else if sawCrashField {
            resolvedKind = .crash
        } else if let detected = [DiagnosticKind.hang, .cpuException, .diskWriteException, .appLaunch].first(where: {
            measurements[$0] != nil
        }) {
            resolvedKind = detected
        } else {
            throw DecodeError(
                code: .notMetricKit,
                message:
                    "document \(document): cannot tell the diagnostic kind (no exceptionType, signal, hangDuration, totalCPUTime, writesCaused or launchDuration in diagnosticMetaData)",
                offset: tape.byteRange(t).lowerBound)
        }

        var tree: CallStackTree?
        if let treeToken, tape.kind(treeToken) == .object {
            tree = try callStackTree(treeToken)
        }
        let signature = CrashSignature.compute(
            kind: resolvedKind, exceptionType: exceptionType, signal: signal, terminationReason: terminationReason,
            callStackTree: tree)
        var diagnostic = Diagnostic(
            kind: resolvedKind, version: version, meta: meta, exceptionType: exceptionType,
            exceptionCode: exceptionCode, signal: signal, terminationReason: terminationReason,
            virtualMemoryRegionInfo: virtualMemoryRegionInfo, exceptionReason: reason,
            primaryMeasurement: measurements[resolvedKind],
            totalSampledTime: resolvedKind == .cpuException ? totalSampledTime : nil, callStackTree: tree,
            signature: signature)
        diagnostic.terminationCategory = terminationCategory
        return diagnostic
    }

    /// An Objective-C exception reason object (a plain string becomes its composed message).
    private func exceptionReason(_ t: Int) -> ExceptionReason? {
        if tape.kind(t) == .string { return ExceptionReason(composedMessage: tape.nonEmptyString(t)) }
        guard tape.kind(t) == .object else { return nil }
        var reason = ExceptionReason()
        tape.forEachMember(t) { k, v in
            if tape.keyEquals(k, "composedMessage") {
                reason.composedMessage = tape.nonEmptyString(v)
            } else if tape.keyEquals(k, "formatString") {
                reason.formatString = tape.nonEmptyString(v)
            } else if tape.keyEquals(k, "arguments") {
                tape.forEachElement(v) { e in
                    reason.arguments.append(
                        tape.string(e) ?? String(decoding: tape.bytes[tape.byteRange(e)], as: UTF8.self))
                }
            } else if tape.keyEquals(k, "exceptionType") {
                reason.exceptionType = tape.nonEmptyString(v)
            } else if tape.keyEquals(k, "className") {
                reason.className = tape.nonEmptyString(v)
            } else if tape.keyEquals(k, "exceptionName") {
                reason.exceptionName = tape.nonEmptyString(v)
            }
        }
        return reason
    }

    // MARK: - Call-stack trees

    /// Decodes a `callStackTree` object, flattening each thread's frames in pre-order with an
    /// explicit stack (no recursion). More than `limits.maxFramesPerTree` frames, or more than the
    /// body's remaining ``framesRemaining``, → `.limitExceeded`. A binary name or UUID longer than
    /// ``DecodeLimits/maxNameBytes`` is dropped (counted).
    mutating func callStackTree(_ t: Int) throws(DecodeError) -> CallStackTree {
        var tree = CallStackTree(callStackPerThread: false, callStacks: [])
        var stacksToken: Int?
        var binaryInfo: Int?
        tape.forEachMember(t) { k, v in
            if tape.keyEquals(k, "callStackPerThread") {
                tree.callStackPerThread = tape.bool(v) ?? false
            } else if tape.keyEquals(k, "callStacks") || tape.keyEquals(k, "callStackThreads") {
                stacksToken = v
            } else if tape.keyEquals(k, "binaryInfo") {
                binaryInfo = v
            }
        }
        // iOS 27 frames carry no binary name: it comes from the tree's `binaryInfo` table by UUID.
        var names: [String: String] = [:]
        if let binaryInfo, tape.kind(binaryInfo) == .array {
            tape.forEachElement(binaryInfo) { e in
                guard names.count < limits.maxFramesPerTree, tape.kind(e) == .object,
                    let uuid = tape.member(e, "uuid"), let name = tape.member(e, "name"),
                    tape.kind(uuid) == .string, tape.kind(name) == .string, nameFits(uuid), nameFits(name),
                    let uuidText = tape.nonEmptyString(uuid), let nameText = tape.nonEmptyString(name)
                else { return }
                names[uuidText] = nameText
            }
        }
        guard let stacksToken else { return tree }
        var frameCount = 0
        let maxFrames = limits.maxFramesPerTree
        // (next element token, end of the array, depth of its frames)
        var pending: [(next: Int, end: Int, depth: Int)] = []
        var failure: DecodeError?
        tape.forEachElement(stacksToken) { s in
            guard failure == nil, tape.kind(s) == .object else { return }
            var stack = CallStack(threadAttributed: nil, frames: [])
            var roots: Int?
            tape.forEachMember(s) { k, v in
                if tape.keyEquals(k, "threadAttributed") {
                    stack.threadAttributed = tape.bool(v)
                } else if tape.keyEquals(k, "callStackRootFrames") || tape.keyEquals(k, "rootFrames") {
                    roots = v
                }
            }
            if let roots, tape.kind(roots) == .array {
                pending.removeAll(keepingCapacity: true)
                pending.append((roots + 1, tape.next(roots), 0))
                while let top = pending.last {
                    if top.next >= top.end {
                        pending.removeLast()
                        continue
                    }
                    let f = top.next
                    pending[pending.count - 1].next = tape.next(f)
                    guard tape.kind(f) == .object else { continue }
                    frameCount += 1
                    if frameCount > maxFrames {
                        failure = DecodeError(
                            code: .limitExceeded,
                            message: "call-stack tree has more than \(maxFrames) frames",
                            offset: tape.byteRange(f).lowerBound)
                        return
                    }
                    framesRemaining -= 1
                    if framesRemaining < 0 {
                        failure = limitError(
                            "the body's call-stack trees hold more than \(limits.maxFramesPerBody) frames", at: f)
                        return
                    }
                    var frame = Frame(
                        binaryUUID: nil, binaryName: nil, address: 0, offsetIntoBinaryTextSegment: 0, sampleCount: nil)
                    var subFrames: Int?
                    tape.forEachMember(f) { k, v in
                        if tape.keyEquals(k, "address") {
                            frame.address = tape.uint64(v) ?? 0
                        } else if tape.keyEquals(k, "offsetIntoBinaryTextSegment") {
                            frame.offsetIntoBinaryTextSegment = tape.uint64(v) ?? 0
                        } else if tape.keyEquals(k, "binaryUUID") {
                            if tape.kind(v) == .string, nameFits(v) { frame.binaryUUID = tape.nonEmptyString(v) }
                        } else if tape.keyEquals(k, "binaryName") {
                            if tape.kind(v) == .string, nameFits(v) { frame.binaryName = tape.nonEmptyString(v) }
                        } else if tape.keyEquals(k, "sampleCount") {
                            if let samples = tape.int64(v) {
                                if ValueBounds.isPlausibleEventCount(samples) {
                                    frame.sampleCount = samples
                                } else {
                                    dropped += 1
                                }
                            }
                        } else if tape.keyEquals(k, "subFrames") {
                            subFrames = v
                        }
                    }
                    if frame.binaryName == nil, let uuid = frame.binaryUUID { frame.binaryName = names[uuid] }
                    stack.frames.append(FlatFrame(depth: top.depth, frame: frame))
                    if let subFrames, tape.kind(subFrames) == .array, tape.tokens[subFrames].count > 0 {
                        pending.append((subFrames + 1, tape.next(subFrames), top.depth + 1))
                    }
                }
            }
            tree.callStacks.append(stack)
        }
        if let failure { throw failure }
        return tree
    }
}
