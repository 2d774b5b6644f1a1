// Read transactions from several threads at once: the baseline of depot-compare --read-scaling.
#include "clmdb_bench.h"

#include <lmdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reader {
    MDB_env *env;
    MDB_dbi dbi;
    uint64_t nkeys, seed, ops_limit, deadline;
    const volatile int *go;
    uint64_t ops, checksum;
    int rc;
    char pad[64];
};

static inline uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void *read_loop(void *arg) {
    struct reader *r = arg;
    while (!*r->go) { /* spin: every thread starts together */ }
    uint64_t rng = r->seed, sum = 0, ops = 0;
    unsigned char keybytes[8];
    for (;;) {
        if (r->ops_limit ? ops == r->ops_limit : ((ops & 255) == 0 && clmdb_now_ns() >= r->deadline)) break;
        uint64_t be = __builtin_bswap64(splitmix64(&rng) % r->nkeys);
        memcpy(keybytes, &be, 8);
        MDB_txn *txn;
        int rc = mdb_txn_begin(r->env, NULL, MDB_RDONLY, &txn);
        if (rc) { r->rc = rc; break; }
        MDB_val k = { 8, keybytes }, v;
        rc = mdb_get(txn, r->dbi, &k, &v);
        if (rc == 0) sum += ((const unsigned char *)v.mv_data)[0];
        mdb_txn_abort(txn);
        if (rc) { r->rc = rc; break; }
        ops++;
    }
    r->ops = ops;
    r->checksum = sum;
    return NULL;
}

uint64_t clmdb_read_transactions(const char *dir, int threads, double seconds, uint64_t ops_per_thread,
                                 uint64_t nkeys, uint64_t *elapsed_ns, uint64_t *checksum) {
    if (threads < 1 || nkeys == 0) return 0;
    MDB_env *env;
    int rc = mdb_env_create(&env);
    if (rc) { fprintf(stderr, "clmdb_bench: mdb_env_create: %s\n", mdb_strerror(rc)); return 0; }
    mdb_env_set_mapsize(env, (size_t)2 << 30);
    mdb_env_set_maxreaders(env, (unsigned)threads + 126);
    // Without MDB_NOTLS: each thread keeps its reader slot, LMDB's fastest read path.
    rc = mdb_env_open(env, dir, MDB_RDONLY, 0600);
    if (rc) { fprintf(stderr, "clmdb_bench: mdb_env_open: %s\n", mdb_strerror(rc)); mdb_env_close(env); return 0; }
    MDB_txn *txn;
    MDB_dbi dbi = 0;
    rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (!rc) { rc = mdb_dbi_open(txn, NULL, 0, &dbi); mdb_txn_abort(txn); }
    if (rc) { fprintf(stderr, "clmdb_bench: open: %s\n", mdb_strerror(rc)); mdb_env_close(env); return 0; }

    struct reader *readers = calloc((size_t)threads, sizeof *readers);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    volatile int go = 0;
    uint64_t total = 0;
    uint64_t t0 = 0;
    if (!readers || !ids) goto done;
    for (int i = 0; i < threads; i++) {
        readers[i] = (struct reader){ .env = env, .dbi = dbi, .nkeys = nkeys, .seed = 0x5EED + (uint64_t)i * 7919,
                                      .ops_limit = ops_per_thread, .go = &go };
    }
    if (threads == 1 && ops_per_thread) { // on this thread, for instruction counts
        go = 1;
        t0 = clmdb_now_ns();
        read_loop(&readers[0]);
    } else {
        for (int i = 0; i < threads; i++) pthread_create(&ids[i], NULL, read_loop, &readers[i]);
        t0 = clmdb_now_ns();
        uint64_t deadline = t0 + (uint64_t)(seconds * 1e9);
        for (int i = 0; i < threads; i++) readers[i].deadline = deadline;
        __atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);
        for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
    }
    *elapsed_ns = clmdb_now_ns() - t0;
    for (int i = 0; i < threads; i++) {
        if (readers[i].rc) { fprintf(stderr, "clmdb_bench: read: %s\n", mdb_strerror(readers[i].rc)); total = 0; goto done; }
        total += readers[i].ops;
        *checksum += readers[i].checksum;
    }
done:
    free(readers);
    free(ids);
    mdb_env_close(env);
    return total;
}
