#ifndef CLMDB_BENCH_H
#define CLMDB_BENCH_H
// The comparison workloads written straight on liblmdb (the baseline of depot-compare).
// Every function opens its own environment in `dir` (created if missing) with MDB_NOTLS only
// (durable defaults), a 2 GiB map, runs the workload on the main database, closes the environment
// and returns the elapsed nanoseconds (CLOCK_MONOTONIC) of the measured part, or 0 on error (the
// LMDB error is printed on stderr). Keys are 8-byte big-endian unsigned integers; values are
// `value_size` bytes.
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Monotonic clock in nanoseconds.
uint64_t clmdb_now_ns(void);

/// Instruction counting (depot-compare --callgrind): from now on every clock read toggles
/// callgrind's collection (CALLGRIND_TOGGLE_COLLECT; run valgrind with --collect-atstart=no), so
/// exactly the measured region of a workload (between its two clock reads) is counted. Returns 1
/// if the callgrind client requests were compiled in (<valgrind/callgrind.h> found), else 0.
int clmdb_bench_count_between_clock_reads(void);

/// How many times clmdb_now_ns has been called (the callgrind mode checks it is 2 per workload).
uint64_t clmdb_bench_clock_reads(void);

/// Keeps freed heap memory in the process (glibc: no trimming to the OS, no mmap for blocks
/// under 64 MiB), so that no engine pays page faults for memory another engine just freed.
void clmdb_bench_keep_heap(void);

/// The version string of the liblmdb loaded at run time.
const char *clmdb_version(void);

/// Puts keys 0..<n (as 8-byte big-endian counters) with MDB_APPEND in one write transaction.
/// Measured: the put loop (the transaction's begin and its commit are timed into `commit_ns`
/// when it is not NULL).
uint64_t clmdb_append_put(const char *dir, size_t n, size_t value_size, uint64_t *commit_ns);

/// Puts the n given keys (in that order, converted to big-endian) in one write transaction.
/// Measured: the put loop; the commit into `commit_ns` when not NULL.
uint64_t clmdb_random_put(const char *dir, const uint64_t *keys, size_t n, size_t value_size, uint64_t *commit_ns);

/// Gets the n given keys (in that order) in one read transaction; every key must exist.
/// Adds the first byte of every value into `*checksum`. Measured: the get loop (after an untimed
/// pass over every record, so that page faults of the fresh map are not measured).
uint64_t clmdb_random_get(const char *dir, const uint64_t *keys, size_t n, uint64_t *checksum);

/// Walks every record with a cursor (MDB_FIRST, then MDB_NEXT) in one read transaction.
/// Stores the record count in `*count` and adds the last byte of every value into `*checksum`.
/// Measured: the walk (cursor open to cursor close), after an untimed pass as above.
uint64_t clmdb_scan(const char *dir, uint64_t *count, uint64_t *checksum);
/* As clmdb_scan, reading every byte of each value (the floor for decoding whole documents). */
uint64_t clmdb_scan_values(const char *dir, uint64_t *count, uint64_t *checksum);

/// n write transactions of one put each (keys start..<start+n), each committed durably (fsync).
/// Measured: all of them. If `latencies_ns` is not NULL it receives each transaction's time.
uint64_t clmdb_durable_single_writes(const char *dir, uint64_t start, size_t n, size_t value_size, uint64_t *latencies_ns);

/// Puts n records in one write transaction, in the given order. Record i's key is
/// key_blob[key_offsets[i] ..< key_offsets[i+1]] and its value val_blob[val_offsets[i] ..< val_offsets[i+1]]
/// (offsets arrays hold n + 1 entries). Measured: the whole transaction, begin to durable commit.
uint64_t clmdb_put_blobs(const char *dir, const uint8_t *key_blob, const size_t *key_offsets,
                         const uint8_t *val_blob, const size_t *val_offsets, size_t n);
/* One durable write transaction (begin, put, commit) per record; 1 on success, 0 on failure. */
uint64_t clmdb_put_blobs_each(const char *dir, const uint8_t *key_blob, const size_t *key_offsets,
                              const uint8_t *val_blob, const size_t *val_offsets, size_t n);

/// Gets the n keys of `key_blob`/`key_offsets` (as above) in one read transaction, adding each
/// value's length into `*checksum`. Measured: read-transaction begin to end.
uint64_t clmdb_get_blobs(const char *dir, const uint8_t *key_blob, const size_t *key_offsets, size_t n,
                         uint64_t *checksum);

/// Read transactions of one get each (mdb_txn_begin, mdb_get, mdb_txn_abort) on seeded random
/// keys 0..<nkeys of the main database in `dir` (filled beforehand, e.g. by clmdb_append_put), from
/// `threads` threads at once, for `seconds` — or, when `ops_per_thread` > 0, exactly that many
/// each without reading the clock (one thread: on the calling thread, for instruction counts).
/// The environment is opened once, read-only and without MDB_NOTLS, so that each thread keeps
/// its reader slot: LMDB's fastest read path. Returns the total transactions (0 on error) and
/// stores the elapsed nanoseconds in `*elapsed_ns`; adds each value's first byte to `*checksum`.
uint64_t clmdb_read_transactions(const char *dir, int threads, double seconds, uint64_t ops_per_thread,
                                 uint64_t nkeys, uint64_t *elapsed_ns, uint64_t *checksum);
#ifdef __cplusplus
}
#endif
#endif
