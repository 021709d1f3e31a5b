/// The Mach exception type name of a MetricKit `exceptionType` (e.g. 1 → `EXC_BAD_ACCESS`),
/// or `nil` for a number that has no name.
package func exceptionTypeName(_ type: Int64) -> String? {
    switch type {
    case 1: return "EXC_BAD_ACCESS"
    case 2: return "EXC_BAD_INSTRUCTION"
    case 3: return "EXC_ARITHMETIC"
    case 4: return "EXC_EMULATION"
    case 5: return "EXC_SOFTWARE"
    case 6: return "EXC_BREAKPOINT"
    case 7: return "EXC_SYSCALL"
    case 8: return "EXC_MACH_SYSCALL"
    case 9: return "EXC_RPC_ALERT"
    case 10: return "EXC_CRASH"
    case 11: return "EXC_RESOURCE"
    case 12: return "EXC_GUARD"
    case 13: return "EXC_CORPSE_NOTIFY"
    default: return nil
    }
}

/// The Darwin signal name of a MetricKit `signal` (e.g. 11 → `SIGSEGV`), or `nil` for a number
/// outside 1…31. Darwin numbering: it differs from Linux above 6 (10 is SIGBUS, not SIGUSR1).
package func signalName(_ signal: Int64) -> String? {
    let names = [
        "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGEMT", "SIGFPE", "SIGKILL", "SIGBUS",
        "SIGSEGV", "SIGSYS", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGURG", "SIGSTOP", "SIGTSTP", "SIGCONT", "SIGCHLD",
        "SIGTTIN", "SIGTTOU", "SIGIO", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGINFO",
        "SIGUSR1", "SIGUSR2",
    ]
    guard signal >= 1 && signal <= Int64(names.count) else { return nil }
    return names[Int(signal) - 1]
}
