#include <sqlite3.h>

/// Turns SQLite's memory statistics off (`SQLITE_CONFIG_MEMSTATUS`, on in Debian's build): with
/// them on, every allocation and free of every connection takes one process-wide mutex, which the
/// writer, the explorer's worker and the readers contended for. `sqlite3_config` is variadic, so
/// Swift cannot call it itself. Must run before SQLite initializes (the first open); returns its
/// result code (`SQLITE_MISUSE` once initialized).
static inline int lifeline_sqlite3_memory_statistics_off(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
