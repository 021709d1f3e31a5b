import LifelineIngest
import LifelineModel
import LifelineStorage

/// Writes the diagnostics of a diagnostic payload, their top frames, and counts each one in its
/// crash group (created on first sight). Each diagnostic's own metadata decides its dimensions.
struct DiagnosticRowsStage: ItemWriteStage {
    /// Frames of the attributed thread kept per diagnostic (the full tree stays in the raw document).
    static let maxFrames = StoredValue.maxFrames

    static let upsertGroup = """
        INSERT INTO crash_groups (app, fingerprint, group_kind, title, first_seen, last_seen, count)
        VALUES (?1, ?2, ?3, ?4, ?5, ?5, 1)
        ON CONFLICT (app, fingerprint) DO UPDATE SET
            count = count + 1,
            first_seen = min(first_seen, excluded.first_seen),
            last_seen = max(last_seen, excluded.last_seen)
        RETURNING id
        """
    static let insertDiagnostic = """
        INSERT INTO diagnostics (payload, ordinal, kind, app_version, build, os_version, device_type,
            region, arch, occurred_at, exception_type, exception_code, signal, termination_reason,
            vm_region_info, objc_exception_name, objc_exception_type, objc_class_name,
            objc_composed_message, objc_format_string, primary_value, primary_unit, primary_raw,
            sampled_time_ms, crash_group, termination_category, pid, signpost_data)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let insertFrame = """
        INSERT INTO diagnostic_frames (diagnostic, position, binary_name, binary_uuid, address, offset)
        VALUES (?, ?, ?, ?, ?, ?)
        """

    func write(_ stored: StoredItem, in session: WriteSession) throws(StoreError) {
        guard case .diagnostic(let payload) = stored.item.document.content else { return }
        for (ordinal, diagnostic) in payload.diagnostics.enumerated() {
            let group = try upsertGroup(diagnostic, stored: stored, in: session)
            let meta = diagnostic.meta
            let reason = diagnostic.exceptionReason
            let primaryValue = diagnostic.primaryMeasurement?.finiteValue
            let values: [SQLValue] = [
                .integer(stored.payloadID), .integer(Int64(ordinal)), .text(diagnostic.kind.rawValue),
                .integer(try session.id(.appVersion, meta.appVersion)),
                .integer(try session.id(.build, meta.appBuildVersion)),
                .integer(try session.id(.osVersion, meta.osVersion)),
                .integer(try session.id(.deviceType, meta.deviceType)),
                .integer(try session.id(.region, meta.regionFormat)),
                .integer(try session.id(.architecture, meta.platformArchitecture)),
                .integer(stored.occurredAt), .integer(diagnostic.exceptionType), .integer(diagnostic.exceptionCode),
                .integer(diagnostic.signal), .text(diagnostic.terminationReason),
                .text(diagnostic.virtualMemoryRegionInfo), .text(reason?.exceptionName), .text(reason?.exceptionType),
                .text(reason?.className), .text(reason?.composedMessage), .text(reason?.formatString),
                .real(primaryValue), .integer(UnitCode.id(diagnostic.primaryMeasurement?.unit)),
                primaryValue == nil ? .text(diagnostic.primaryMeasurement?.raw) : .null,
                .real(diagnostic.totalSampledTime?.finiteValue), .integer(group),
                .text(diagnostic.terminationCategory), .integer(meta.pid), .text(diagnostic.signpostData),
            ]
            try session.connection.run(Self.insertDiagnostic, values)
            let diagnosticID = session.connection.lastInsertRowID
            try StateRowsStage.writeStates(diagnostic.appStates, diagnostic: diagnosticID, in: session)
            let chain = diagnostic.callStackTree?.attributedChain ?? []
            for (position, frame) in chain.prefix(Self.maxFrames).enumerated() {
                try session.connection.run(
                    Self.insertFrame,
                    [
                        .integer(diagnosticID), .integer(Int64(position)), .text(frame.binaryName),
                        .text(frame.binaryUUID), .integer(Int64(bitPattern: frame.address)),
                        .integer(Int64(bitPattern: frame.offsetIntoBinaryTextSegment)),
                    ])
            }
        }
    }

    private func upsertGroup(
        _ diagnostic: Diagnostic, stored: StoredItem, in session: WriteSession
    ) throws(StoreError) -> Int64 {
        let signature = diagnostic.signature
        let (fingerprint, kind) = StoredValue.crashGroup(diagnostic)
        let id = try session.connection.first(
            Self.upsertGroup,
            [
                .integer(stored.appID), .text(fingerprint), .text(kind), .text(signature.title),
                .integer(stored.occurredAt),
            ]
        ) { $0.int64(0) }
        guard let id else {
            throw StoreError(.internal, "internal storage error", cause: "crash group upsert returned no id")
        }
        return id
    }
}
