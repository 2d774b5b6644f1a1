#ifndef CDEPOT_ATOMIC_H
#define CDEPOT_ATOMIC_H

// Word-sized atomics for DepotLMDB's reader gate (and, in cdepot_cells.c, the free lists of
// DepotEngine's decoder life cells). Swift's own `Atomic` (Synchronization) needs
// macOS 15 / iOS 18, above Depot's platform floor; these inline functions compile to the same
// instructions and are inlined into the Swift callers.

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Sequentially consistent load of `*p`.
static inline intptr_t cdepot_atomic_load(const intptr_t *p) {
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

/// Sequentially consistent store of `value` to `*p`.
static inline void cdepot_atomic_store(intptr_t *p, intptr_t value) {
    __atomic_store_n(p, value, __ATOMIC_SEQ_CST);
}

/// Adds `delta` to `*p` (sequentially consistent) and returns the new value.
static inline intptr_t cdepot_atomic_add(intptr_t *p, intptr_t delta) {
    return __atomic_add_fetch(p, delta, __ATOMIC_SEQ_CST);
}

/// An acquire fence: loads before it are ordered before loads and stores after it.
static inline void cdepot_atomic_fence_acquire(void) {
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

/// Acquire load of the pointer at `*p`.
static inline void *cdepot_atomic_load_pointer(void *const *p) {
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/// Release store of `value` to the pointer at `*p`.
static inline void cdepot_atomic_store_pointer(void **p, void *value) {
    __atomic_store_n(p, value, __ATOMIC_RELEASE);
}

/// Sequentially consistent load of the pointer at `*p`.
static inline void *cdepot_atomic_load_pointer_seq_cst(void *const *p) {
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

/// Sequentially consistent store of `value` to the pointer at `*p`.
static inline void cdepot_atomic_store_pointer_seq_cst(void **p, void *value) {
    __atomic_store_n(p, value, __ATOMIC_SEQ_CST);
}

/// Replaces the pointer at `*p` with `value` and returns the one it held.
static inline void *cdepot_atomic_exchange_pointer(void **p, void *value) {
    return __atomic_exchange_n(p, value, __ATOMIC_ACQ_REL);
}

/// Stores `desired` at `*p` if it holds `expected`; returns 1 when it did.
static inline int cdepot_atomic_compare_exchange_pointer(void **p, void *expected, void *desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ? 1 : 0;
}

/// The calling thread's number + 1 as `cdepot_thread_number_set` left it (0: none yet), in a
/// thread-local variable (DepotSupport's `ThreadIndex`: cheaper than `pthread_getspecific`).
intptr_t cdepot_thread_number_get(void);

/// Sets the calling thread's number + 1 (0: none).
void cdepot_thread_number_set(intptr_t value);

/// A life cell (three words, never freed) given back earlier, or NULL when there is none: the
/// caller then allocates one (see DepotEngine's `DecoderLifeCell`). Words 0 and 1 are the
/// caller's; word 2 is this list's.
uint64_t *cdepot_cell_take(void);

/// Gives a life cell back (kept by the calling thread, up to a few dozen, then shared; a
/// thread's kept cells are shared at its exit).
void cdepot_cell_give(uint64_t *cell);

/// How many cells the calling thread keeps (for tests).
int cdepot_cells_kept_by_this_thread(void);

/// Whether `cell` is on the shared list (for tests; walks the list under its lock).
int cdepot_cells_shared_contains(const uint64_t *cell);

#ifdef __cplusplus
}
#endif
#endif
