#define _POSIX_C_SOURCE 200809L
#include "clmdb_bench.h"

#include <errno.h>
#include <lmdb.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAP_SIZE ((size_t)2 << 30)

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define CLMDB_HAVE_CALLGRIND 1
#endif
#endif

static int clmdb_toggle_on_clock_reads = 0;
static uint64_t clmdb_clock_reads = 0;

int clmdb_bench_count_between_clock_reads(void) {
    clmdb_toggle_on_clock_reads = 1;
#if defined(CLMDB_HAVE_CALLGRIND)
    return 1;
#else
    return 0;
#endif
}

uint64_t clmdb_bench_clock_reads(void) { return clmdb_clock_reads; }

uint64_t clmdb_now_ns(void) {
    clmdb_clock_reads++;
#if defined(CLMDB_HAVE_CALLGRIND)
    if (clmdb_toggle_on_clock_reads) CALLGRIND_TOGGLE_COLLECT;
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void clmdb_bench_keep_heap(void) {
#if defined(__GLIBC__)
    mallopt(M_TRIM_THRESHOLD, 0x7fffffff);
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
#endif
}

const char *clmdb_version(void) { return mdb_version(NULL, NULL, NULL); }

static int report(int rc, const char *what) {
    if (rc != 0) fprintf(stderr, "clmdb_bench: %s: %s\n", what, mdb_strerror(rc));
    return rc;
}

static int open_env(const char *dir, MDB_env **env) {
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "clmdb_bench: mkdir %s: %s\n", dir, strerror(errno));
        return -1;
    }
    int rc = mdb_env_create(env);
    if (report(rc, "mdb_env_create")) return rc;
    rc = mdb_env_set_mapsize(*env, MAP_SIZE);
    if (!rc) rc = mdb_env_open(*env, dir, MDB_NOTLS, 0600);
    if (report(rc, "mdb_env_open")) { mdb_env_close(*env); *env = NULL; }
    return rc;
}

static inline void store_be64(unsigned char *out, uint64_t v) {
    uint64_t be = __builtin_bswap64(v);
    memcpy(out, &be, 8);
}

static unsigned char *make_value(size_t value_size) {
    unsigned char *value = malloc(value_size ? value_size : 1);
    for (size_t i = 0; i < value_size; i++) value[i] = (unsigned char)(i * 31 + 7);
    return value;
}

/// Shared body of the two bulk puts: `keys` NULL means the counters 0..<n.
static uint64_t bulk_put(const char *dir, const uint64_t *keys, size_t n, size_t value_size,
                         unsigned flags, uint64_t *commit_ns) {
    MDB_env *env;
    if (open_env(dir, &env)) return 0;
    unsigned char *value = make_value(value_size);
    MDB_txn *txn;
    MDB_dbi dbi;
    uint64_t elapsed = 0;
    int rc = mdb_txn_begin(env, NULL, 0, &txn);
    if (report(rc, "mdb_txn_begin")) goto done;
    rc = mdb_dbi_open(txn, NULL, 0, &dbi);
    if (report(rc, "mdb_dbi_open")) { mdb_txn_abort(txn); goto done; }
    unsigned char kbuf[8];
    MDB_val k = {8, kbuf}, v;
    uint64_t t0 = clmdb_now_ns();
    for (size_t i = 0; i < n; i++) {
        store_be64(kbuf, keys ? keys[i] : (uint64_t)i);
        k.mv_size = 8; k.mv_data = kbuf;
        v.mv_size = value_size; v.mv_data = value;
        rc = mdb_put(txn, dbi, &k, &v, flags);
        if (rc) { report(rc, "mdb_put"); mdb_txn_abort(txn); goto done; }
    }
    uint64_t t1 = clmdb_now_ns();
    rc = mdb_txn_commit(txn);
    if (report(rc, "mdb_txn_commit")) goto done;
    if (commit_ns) *commit_ns = clmdb_now_ns() - t1;
    elapsed = t1 - t0;
done:
    free(value);
    mdb_env_close(env);
    return elapsed;
}

uint64_t clmdb_append_put(const char *dir, size_t n, size_t value_size, uint64_t *commit_ns) {
    return bulk_put(dir, NULL, n, value_size, MDB_APPEND, commit_ns);
}

uint64_t clmdb_random_put(const char *dir, const uint64_t *keys, size_t n, size_t value_size, uint64_t *commit_ns) {
    return bulk_put(dir, keys, n, value_size, 0, commit_ns);
}

/// Reads every record once, untimed, so that the page faults of a freshly opened map are not
/// part of what the read workloads measure (the Swift and GRDB sides do the same).
static int touch_all(MDB_txn *txn, MDB_dbi dbi, uint64_t *sink) {
    MDB_cursor *cursor;
    MDB_val k, v;
    int rc = mdb_cursor_open(txn, dbi, &cursor);
    if (rc) return rc;
    MDB_cursor_op op = MDB_FIRST;
    while ((rc = mdb_cursor_get(cursor, &k, &v, op)) == 0) {
        *sink += ((const unsigned char *)v.mv_data)[0];
        op = MDB_NEXT;
    }
    mdb_cursor_close(cursor);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

uint64_t clmdb_random_get(const char *dir, const uint64_t *keys, size_t n, uint64_t *checksum) {
    MDB_env *env;
    if (open_env(dir, &env)) return 0;
    MDB_txn *txn;
    MDB_dbi dbi;
    uint64_t elapsed = 0, sum = 0;
    int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (report(rc, "mdb_txn_begin")) goto done;
    rc = mdb_dbi_open(txn, NULL, 0, &dbi);
    if (report(rc, "mdb_dbi_open")) { mdb_txn_abort(txn); goto done; }
    uint64_t sink = 0;
    rc = touch_all(txn, dbi, &sink);
    if (report(rc, "touch")) { mdb_txn_abort(txn); goto done; }
    unsigned char kbuf[8];
    MDB_val k, v;
    uint64_t t0 = clmdb_now_ns();
    for (size_t i = 0; i < n; i++) {
        store_be64(kbuf, keys[i]);
        k.mv_size = 8; k.mv_data = kbuf;
        rc = mdb_get(txn, dbi, &k, &v);
        if (rc) { report(rc, "mdb_get"); mdb_txn_abort(txn); goto done; }
        sum += ((const unsigned char *)v.mv_data)[0];
    }
    elapsed = clmdb_now_ns() - t0;
    mdb_txn_abort(txn);
    *checksum += sum;
done:
    mdb_env_close(env);
    return elapsed;
}

static uint64_t scan(const char *dir, uint64_t *count, uint64_t *checksum, int every_byte);

uint64_t clmdb_scan(const char *dir, uint64_t *count, uint64_t *checksum) {
    return scan(dir, count, checksum, 0);
}

uint64_t clmdb_scan_values(const char *dir, uint64_t *count, uint64_t *checksum) {
    return scan(dir, count, checksum, 1);
}

/* A cursor walk in key order; reads each value's last byte, or (every_byte) every byte of it. */
static uint64_t scan(const char *dir, uint64_t *count, uint64_t *checksum, int every_byte) {
    MDB_env *env;
    if (open_env(dir, &env)) return 0;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_cursor *cursor;
    uint64_t elapsed = 0, sum = 0, records = 0;
    int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (report(rc, "mdb_txn_begin")) goto done;
    rc = mdb_dbi_open(txn, NULL, 0, &dbi);
    if (report(rc, "mdb_dbi_open")) { mdb_txn_abort(txn); goto done; }
    uint64_t sink = 0;
    rc = touch_all(txn, dbi, &sink);
    if (report(rc, "touch")) { mdb_txn_abort(txn); goto done; }
    MDB_val k, v;
    uint64_t t0 = clmdb_now_ns();
    rc = mdb_cursor_open(txn, dbi, &cursor);
    if (report(rc, "mdb_cursor_open")) { mdb_txn_abort(txn); goto done; }
    MDB_cursor_op op = MDB_FIRST;
    while ((rc = mdb_cursor_get(cursor, &k, &v, op)) == 0) {
        records++;
        const unsigned char *bytes = v.mv_data;
        if (every_byte) {
            for (size_t i = 0; i < v.mv_size; i++) sum += bytes[i];
        } else {
            sum += bytes[v.mv_size - 1];
        }
        op = MDB_NEXT;
    }
    mdb_cursor_close(cursor);
    elapsed = clmdb_now_ns() - t0;
    mdb_txn_abort(txn);
    if (rc != MDB_NOTFOUND) { report(rc, "mdb_cursor_get"); elapsed = 0; goto done; }
    *count = records;
    *checksum += sum;
done:
    mdb_env_close(env);
    return elapsed;
}

uint64_t clmdb_durable_single_writes(const char *dir, uint64_t start, size_t n, size_t value_size, uint64_t *latencies_ns) {
    MDB_env *env;
    if (open_env(dir, &env)) return 0;
    unsigned char *value = make_value(value_size);
    MDB_dbi dbi;
    MDB_txn *txn;
    uint64_t elapsed = 0;
    int rc = mdb_txn_begin(env, NULL, 0, &txn);
    if (!rc) rc = mdb_dbi_open(txn, NULL, 0, &dbi);
    if (!rc) rc = mdb_txn_commit(txn); else mdb_txn_abort(txn);
    if (report(rc, "open main database")) goto done;
    unsigned char kbuf[8];
    MDB_val k, v;
    uint64_t t0 = clmdb_now_ns();
    for (size_t i = 0; i < n; i++) {
        uint64_t w0 = clmdb_now_ns();
        rc = mdb_txn_begin(env, NULL, 0, &txn);
        if (report(rc, "mdb_txn_begin")) goto done;
        store_be64(kbuf, start + i);
        k.mv_size = 8; k.mv_data = kbuf;
        v.mv_size = value_size; v.mv_data = value;
        rc = mdb_put(txn, dbi, &k, &v, 0);
        if (rc) { report(rc, "mdb_put"); mdb_txn_abort(txn); goto done; }
        rc = mdb_txn_commit(txn);
        if (report(rc, "mdb_txn_commit")) goto done;
        if (latencies_ns) latencies_ns[i] = clmdb_now_ns() - w0;
    }
    elapsed = clmdb_now_ns() - t0;
done:
    free(value);
    mdb_env_close(env);
    return elapsed;
}

/* Record i of packed key and value blobs (offsets[i]..offsets[i + 1]) as LMDB values. */
static void blob_pair(const uint8_t *key_blob, const size_t *key_offsets, const uint8_t *val_blob,
                      const size_t *val_offsets, size_t i, MDB_val *k, MDB_val *v) {
    k->mv_size = key_offsets[i + 1] - key_offsets[i];
    k->mv_data = (void *)(key_blob + key_offsets[i]);
    v->mv_size = val_offsets[i + 1] - val_offsets[i];
    v->mv_data = (void *)(val_blob + val_offsets[i]);
}

uint64_t clmdb_put_blobs(const char *dir, const uint8_t *key_blob, const size_t *key_offsets,
                         const uint8_t *val_blob, const size_t *val_offsets, size_t n) {
    MDB_env *env;
    if (open_env(dir, &env)) return 0;
    MDB_txn *txn;
    MDB_dbi dbi;
    uint64_t elapsed = 0;
    MDB_val k, v;
    uint64_t t0 = clmdb_now_ns();
    int rc = mdb_txn_begin(env, NULL, 0, &txn);
    if (report(rc, "mdb_txn_begin")) goto done;
    rc = mdb_dbi_open(txn, NULL, 0, &dbi);
    if (report(rc, "mdb_dbi_open")) { mdb_txn_abort(txn); goto done; }
    for (size_t i = 0; i < n; i++) {
        blob_pair(key_blob, key_offsets, val_blob, val_offsets, i, &k, &v);
        rc = mdb_put(txn, dbi, &k, &v, 0);
        if (rc) { report(rc, "mdb_put"); mdb_txn_abort(txn); goto done; }
    }
    rc = mdb_txn_commit(txn);
    if (report(rc, "mdb_txn_commit")) goto done;
    elapsed = clmdb_now_ns() - t0;
done:
    mdb_env_close(env);
    return elapsed;
}

/* One durable write transaction per record (begin, put, commit): the floor for one document
 * per `store.write`. Reads no clock (instruction mode counts the caller's region). Returns 1 on
 * success, 0 on failure. */
uint64_t clmdb_put_blobs_each(const char *dir, const uint8_t *key_blob, const size_t *key_offsets,
                              const uint8_t *val_blob, const size_t *val_offsets, size_t n) {
    MDB_env *env;
    if (open_env(dir, &env)) return 0;
    MDB_txn *txn;
    MDB_dbi dbi;
    uint64_t ok = 0;
    MDB_val k, v;
    for (size_t i = 0; i < n; i++) {
        int rc = mdb_txn_begin(env, NULL, 0, &txn);
        if (report(rc, "mdb_txn_begin")) goto done;
        rc = mdb_dbi_open(txn, NULL, 0, &dbi);
        if (report(rc, "mdb_dbi_open")) { mdb_txn_abort(txn); goto done; }
        blob_pair(key_blob, key_offsets, val_blob, val_offsets, i, &k, &v);
        rc = mdb_put(txn, dbi, &k, &v, 0);
        if (rc) { report(rc, "mdb_put"); mdb_txn_abort(txn); goto done; }
        rc = mdb_txn_commit(txn);
        if (report(rc, "mdb_txn_commit")) goto done;
    }
    ok = 1;
done:
    mdb_env_close(env);
    return ok;
}

uint64_t clmdb_get_blobs(const char *dir, const uint8_t *key_blob, const size_t *key_offsets, size_t n,
                         uint64_t *checksum) {
    MDB_env *env;
    if (open_env(dir, &env)) return 0;
    MDB_txn *txn;
    MDB_dbi dbi;
    uint64_t elapsed = 0, sum = 0;
    MDB_val k, v;
    uint64_t t0 = clmdb_now_ns();
    int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (report(rc, "mdb_txn_begin")) goto done;
    rc = mdb_dbi_open(txn, NULL, 0, &dbi);
    if (report(rc, "mdb_dbi_open")) { mdb_txn_abort(txn); goto done; }
    for (size_t i = 0; i < n; i++) {
        k.mv_size = key_offsets[i + 1] - key_offsets[i];
        k.mv_data = (void *)(key_blob + key_offsets[i]);
        rc = mdb_get(txn, dbi, &k, &v);
        if (rc) { report(rc, "mdb_get"); mdb_txn_abort(txn); goto done; }
        sum += v.mv_size;
    }
    mdb_txn_abort(txn);
    elapsed = clmdb_now_ns() - t0;
    *checksum += sum;
done:
    mdb_env_close(env);
    return elapsed;
}
