import LifelineAlertState
import NIOPosix

/// Rule reloads: the rule file read again (`POST /-/reload`, SIGHUP), or a rule set applied.
extension AlertEvaluator {
    /// Reads the rule file again; on any problem the current rules stay and the error lists every one.
    @discardableResult
    package func reload() async throws(RuleFileError) -> RuleSet {
        guard let rulesPath else {
            throw RuleFileError([
                .init(file: "-", line: nil, subject: nil, message: "no rule file configured (serve --rules FILE)")
            ])
        }
        let loaded: Result<RuleSet, RuleFileError>
        do {
            // A file read: on NIO's blocking pool, not in this actor on the cooperative pool.
            loaded = try await NIOThreadPool.singleton.runIfActive {
                Result { () throws(RuleFileError) in try RuleFileLoader.load(path: rulesPath) }
            }
        } catch {
            throw RuleFileError([
                .init(file: rulesPath, line: nil, subject: nil, message: "could not be read: \(error)")
            ])
        }
        let set = try loaded.get()
        await apply(set)
        return set
    }

    /// Replaces the rules (already validated); state of removed rules is forgotten.
    package func apply(_ set: RuleSet) async {
        rules = set
        loadedAt = clock.now()
        notifications.configure(set.receivers)
        let names = Set(set.rules.map(\.name))
        if states != nil { states = states?.filter { names.contains($0.key) } }
        evaluations = evaluations.filter { names.contains($0.key) }
        // A follower leaves the shared state alone: the leader's rules decide (they may differ
        // for a moment while a new rule file rolls out); it forgets when it takes the lead.
        if !isFollower { await forgetRemovedRules() }
        logger.info(
            "alert rules loaded",
            metadata: ["rules": "\(set.rules.count)", "receivers": "\(set.receivers.count)"])
    }
}
