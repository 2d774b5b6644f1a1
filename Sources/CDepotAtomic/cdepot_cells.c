// Life cells: small blocks of memory that are never freed, each lent to one decoder at a time
// (DepotEngine's `DecoderLifeCell`). A thread keeps the cells given back on it and takes from
// them first, without a lock; the few beyond that, and a thread's own at its exit, go to one
// list under a mutex.
#include "cdepot_atomic.h"
#include <pthread.h>
#include <stddef.h>

typedef struct cdepot_cell {
    uint64_t words[2];
    struct cdepot_cell *next;
} cdepot_cell;

enum { cdepot_cells_kept_per_thread = 64 };

static _Thread_local cdepot_cell *cdepot_local_cells;
static _Thread_local int cdepot_local_cell_count;
static _Thread_local int cdepot_local_cells_registered;

static pthread_mutex_t cdepot_shared_cells_lock = PTHREAD_MUTEX_INITIALIZER;
static cdepot_cell *cdepot_shared_cells;
static pthread_key_t cdepot_cells_exit_key;
static pthread_once_t cdepot_cells_key_once = PTHREAD_ONCE_INIT;

static void cdepot_give_shared(cdepot_cell *first, cdepot_cell *last) {
    pthread_mutex_lock(&cdepot_shared_cells_lock);
    last->next = cdepot_shared_cells;
    cdepot_shared_cells = first;
    pthread_mutex_unlock(&cdepot_shared_cells_lock);
}

/// At a thread's exit: its kept cells go to the shared list.
static void cdepot_cells_thread_exit(void *unused) {
    (void)unused;
    cdepot_cell *first = cdepot_local_cells;
    cdepot_local_cells = NULL;
    cdepot_local_cell_count = 0;
    cdepot_local_cells_registered = 0;
    if (first == NULL) return;
    cdepot_cell *last = first;
    while (last->next != NULL) last = last->next;
    cdepot_give_shared(first, last);
}

static void cdepot_cells_make_key(void) {
    pthread_key_create(&cdepot_cells_exit_key, cdepot_cells_thread_exit);
}

uint64_t *cdepot_cell_take(void) {
    cdepot_cell *cell = cdepot_local_cells;
    if (cell != NULL) {
        cdepot_local_cells = cell->next;
        cdepot_local_cell_count -= 1;
        return cell->words;
    }
    pthread_mutex_lock(&cdepot_shared_cells_lock);
    cell = cdepot_shared_cells;
    if (cell != NULL) cdepot_shared_cells = cell->next;
    pthread_mutex_unlock(&cdepot_shared_cells_lock);
    return cell == NULL ? NULL : cell->words;
}

void cdepot_cell_give(uint64_t *words) {
    cdepot_cell *cell = (cdepot_cell *)(void *)words;
    if (cdepot_local_cell_count >= cdepot_cells_kept_per_thread) {
        cdepot_give_shared(cell, cell);
        return;
    }
    if (!cdepot_local_cells_registered) {
        pthread_once(&cdepot_cells_key_once, cdepot_cells_make_key);
        // A non-null value, so that the destructor runs at the thread's exit.
        pthread_setspecific(cdepot_cells_exit_key, (void *)1);
        cdepot_local_cells_registered = 1;
    }
    cell->next = cdepot_local_cells;
    cdepot_local_cells = cell;
    cdepot_local_cell_count += 1;
}
