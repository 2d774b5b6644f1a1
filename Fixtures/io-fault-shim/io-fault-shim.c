// io-fault-shim: an LD_PRELOAD library that makes one I/O call on an LMDB data file fail, for
// the fault-injection tests (Tests/DepotCLITests/InjectedIOFaultTests.swift). It sits between
// liblmdb and the C library, so LMDB itself sees the failure, as it would on a failing disk.
//
//   cc -shared -fPIC -o io-fault-shim.so io-fault-shim.c -ldl
//   DEPOT_FAULT=count        LD_PRELOAD=./io-fault-shim.so depot put ...   # prints the calls made
//   DEPOT_FAULT=fdatasync:1  LD_PRELOAD=./io-fault-shim.so depot put ...   # the 1st fdatasync fails (EIO)
//   DEPOT_FAULT=writev:2:ENOSPC ...                                        # the 2nd writev fails (ENOSPC)
//   DEPOT_FAULT=fsyncdir:1:EINVAL ...                # the 1st fsync of a folder fails (EINVAL)
//
// Only calls on a file named data.mdb (or data.mdb.partial-PID, a backup being written) are
// counted and failed (fsyncdir: fsync calls on folders);
// a failed call does nothing and returns -1 with errno set (EIO, ENOSPC or EINVAL); every other
// call goes through. At exit, the calls counted are written to standard error as
// "io-fault-shim: pwrite=N writev=N fdatasync=N fsync=N write=N fsyncdir=N". Linux only
// (/proc/self/fd, LD_PRELOAD).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { F_PWRITE, F_WRITEV, F_FDATASYNC, F_FSYNC, F_WRITE, F_FSYNCDIR, F_COUNT };
static const char *const names[F_COUNT] = {"pwrite", "writev", "fdatasync", "fsync", "write", "fsyncdir"};
static atomic_long calls[F_COUNT];
static int active = 0;
static int target = -1;
static long nth = 0;
static int fault_errno = EIO;

__attribute__((constructor)) static void configure(void) {
    const char *spec = getenv("DEPOT_FAULT");
    if (spec == NULL) return;
    active = 1;
    char name[32] = "", err[16] = "EIO";
    long n = 0;
    if (sscanf(spec, "%31[a-z]:%ld:%15s", name, &n, err) < 2) return; // "count": count only
    for (int i = 0; i < F_COUNT; i++) if (strcmp(name, names[i]) == 0) target = i;
    nth = n;
    if (strcmp(err, "ENOSPC") == 0) fault_errno = ENOSPC;
    if (strcmp(err, "EINVAL") == 0) fault_errno = EINVAL;
}

__attribute__((destructor)) static void report(void) {
    if (!active) return;
    char line[160];
    int len = snprintf(line, sizeof line, "io-fault-shim: pwrite=%ld writev=%ld fdatasync=%ld fsync=%ld write=%ld fsyncdir=%ld\n",
                       atomic_load(&calls[F_PWRITE]), atomic_load(&calls[F_WRITEV]), atomic_load(&calls[F_FDATASYNC]),
                       atomic_load(&calls[F_FSYNC]), atomic_load(&calls[F_WRITE]), atomic_load(&calls[F_FSYNCDIR]));
    if (len > 0) {
        ssize_t (*real_write)(int, const void *, size_t);
        *(void **)&real_write = dlsym(RTLD_NEXT, "write");
        if (real_write != NULL) (void)real_write(2, line, (size_t)len);
    }
}

static int is_data_file(int fd) {
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, path, sizeof path - 1);
    if (len < 9) return 0;
    path[len] = '\0';
    if (strcmp(path + len - 9, "/data.mdb") == 0) return 1;
    // A backup's copy, written as data.mdb.partial-PID until it is complete.
    const char *slash = strrchr(path, '/');
    return slash && strncmp(slash, "/data.mdb.partial-", 18) == 0;
}

static int is_directory(int fd) {
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

/// Counts a call on the data file (a folder for fsyncdir); true when it is the one to fail
/// (errno is then set).
static int fails(int which, int fd) {
    if (!active || !(which == F_FSYNCDIR ? is_directory(fd) : is_data_file(fd))) return 0;
    long n = atomic_fetch_add(&calls[which], 1) + 1;
    if (which != target || n != nth) return 0;
    errno = fault_errno;
    return 1;
}

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*pwrite64_fn)(int, const void *, size_t, off64_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef int (*sync_fn)(int);

#define REAL(name, type) \
    static type real = NULL; \
    if (real == NULL) real = (type)dlsym(RTLD_NEXT, name)

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    REAL("pwrite", pwrite_fn);
    if (fails(F_PWRITE, fd)) return -1;
    return real(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t offset) {
    REAL("pwrite64", pwrite64_fn);
    if (fails(F_PWRITE, fd)) return -1;
    return real(fd, buf, count, offset);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
    REAL("writev", writev_fn);
    if (fails(F_WRITEV, fd)) return -1;
    return real(fd, iov, iovcnt);
}

ssize_t write(int fd, const void *buf, size_t count) {
    REAL("write", write_fn);
    if (fails(F_WRITE, fd)) return -1;
    return real(fd, buf, count);
}

int fdatasync(int fd) {
    REAL("fdatasync", sync_fn);
    if (fails(F_FDATASYNC, fd)) return -1;
    return real(fd);
}

int fsync(int fd) {
    REAL("fsync", sync_fn);
    if (fails(F_FSYNC, fd) || fails(F_FSYNCDIR, fd)) return -1;
    return real(fd);
}
