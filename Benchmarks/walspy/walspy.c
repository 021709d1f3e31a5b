#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
/* LD_PRELOAD shim for Benchmarks/aggregator-ingest.sh (WRITES_BY_TABLE=1): logs to $WALSPY_LOG the
 * page number and commit flag of every WAL frame header SQLite writes (a 24-byte pwrite at offset
 * >= 32 of a file ending in "-wal"), as "PAGE COMMIT", and the offset and size of every write of
 * 512 bytes or more to a file ending in ".sqlite" (the checkpoints), as "c OFFSET SIZE". The
 * script maps the pages to tables and indexes with dbstat afterwards. Measurement only. */
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static FILE *logf;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int is_wal(int fd) {
    char p[64], t[512]; snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(p, t, sizeof t - 1); if (n <= 0) return 0; t[n] = 0;
    return n > 4 && strcmp(t + n - 4, "-wal") == 0;
}
static int is_db(int fd) {
    char p[64], t[512]; snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(p, t, sizeof t - 1); if (n <= 0) return 0; t[n] = 0;
    return n > 7 && strcmp(t + n - 7, ".sqlite") == 0;
}
ssize_t pwrite64(int fd, const void *buf, size_t count, off_t off) {
    if (!real_pwrite64) real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
    if (count == 24 && off >= 32 && is_wal(fd)) {
        const unsigned char *b = buf; uint32_t pg = (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
        uint32_t commit = (b[4] << 24) | (b[5] << 16) | (b[6] << 8) | b[7];
        pthread_mutex_lock(&mu);
        if (!logf) { const char *path = getenv("WALSPY_LOG"); logf = fopen(path ? path : "/tmp/walspy.log", "w"); }
        if (logf) fprintf(logf, "%u %u\n", pg, commit);
        pthread_mutex_unlock(&mu);
    }
    else if (count >= 512 && is_db(fd)) {
        pthread_mutex_lock(&mu);
        if (!logf) { const char *path = getenv("WALSPY_LOG"); logf = fopen(path ? path : "/tmp/walspy.log", "w"); }
        if (logf) fprintf(logf, "c %lld %zu\n", (long long)off, count);
        pthread_mutex_unlock(&mu);
    }
    return real_pwrite64(fd, buf, count, off);
}
ssize_t pwrite(int fd, const void *buf, size_t count, off_t off) { return pwrite64(fd, buf, count, off); }
