// Life cells: small blocks of memory that are never freed, each lent to one decoder at a time
// (DepotEngine's `DecoderLifeCell`). A thread keeps the cells given back on it and takes from
// them first, without a lock; the few beyond that, and a thread's own at its exit, go to one
// list under a mutex.
#include "cdepot_atomic.h"
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

typedef struct cdepot_cell {
    uint64_t words[2];
    struct cdepot_cell *next;
} cdepot_cell;

/// A thread's kept cells. Allocated on the thread's first give, and also the value of
/// `cdepot_cells_exit_key`, whose destructor receives it: the destructor never reads the
/// thread-local variable, which on Darwin may already be torn down when it runs.
typedef struct cdepot_cell_list {
    cdepot_cell *head;
    int count;
} cdepot_cell_list;

enum { cdepot_cells_kept_per_thread = 64 };

static _Thread_local cdepot_cell_list *cdepot_local_cells;

static pthread_mutex_t cdepot_shared_cells_lock = PTHREAD_MUTEX_INITIALIZER;
static cdepot_cell *cdepot_shared_cells;
static pthread_key_t cdepot_cells_exit_key;
static int cdepot_cells_key_made;
static pthread_once_t cdepot_cells_key_once = PTHREAD_ONCE_INIT;

static void cdepot_give_shared(cdepot_cell *first, cdepot_cell *last) {
    pthread_mutex_lock(&cdepot_shared_cells_lock);
    last->next = cdepot_shared_cells;
    cdepot_shared_cells = first;
    pthread_mutex_unlock(&cdepot_shared_cells_lock);
}

/// At a thread's exit: its kept cells go to the shared list.
static void cdepot_cells_thread_exit(void *value) {
    cdepot_cell_list *list = value;
    if (cdepot_local_cells == list) cdepot_local_cells = NULL;
    cdepot_cell *first = list->head;
    if (first != NULL) {
        cdepot_cell *last = first;
        while (last->next != NULL) last = last->next;
        cdepot_give_shared(first, last);
    }
    free(list);
}

static void cdepot_cells_make_key(void) {
    cdepot_cells_key_made = pthread_key_create(&cdepot_cells_exit_key, cdepot_cells_thread_exit) == 0;
}

/// The calling thread's list, made and registered on first use; NULL when it cannot be (no
/// memory, no key): the caller shares its cell instead.
static cdepot_cell_list *cdepot_thread_cells(void) {
    cdepot_cell_list *list = cdepot_local_cells;
    if (list != NULL) return list;
    pthread_once(&cdepot_cells_key_once, cdepot_cells_make_key);
    if (!cdepot_cells_key_made) return NULL;
    list = calloc(1, sizeof *list);
    if (list == NULL) return NULL;
    if (pthread_setspecific(cdepot_cells_exit_key, list) != 0) {
        free(list);
        return NULL;
    }
    cdepot_local_cells = list;
    return list;
}

uint64_t *cdepot_cell_take(void) {
    cdepot_cell_list *list = cdepot_local_cells;
    if (list != NULL && list->head != NULL) {
        cdepot_cell *cell = list->head;
        list->head = cell->next;
        list->count -= 1;
        return cell->words;
    }
    pthread_mutex_lock(&cdepot_shared_cells_lock);
    cdepot_cell *cell = cdepot_shared_cells;
    if (cell != NULL) cdepot_shared_cells = cell->next;
    pthread_mutex_unlock(&cdepot_shared_cells_lock);
    return cell == NULL ? NULL : cell->words;
}

void cdepot_cell_give(uint64_t *words) {
    cdepot_cell *cell = (cdepot_cell *)(void *)words;
    cdepot_cell_list *list = cdepot_thread_cells();
    if (list == NULL || list->count >= cdepot_cells_kept_per_thread) {
        cdepot_give_shared(cell, cell);
        return;
    }
    cell->next = list->head;
    list->head = cell;
    list->count += 1;
}

int cdepot_cells_kept_by_this_thread(void) {
    cdepot_cell_list *list = cdepot_local_cells;
    return list == NULL ? 0 : list->count;
}

int cdepot_cells_shared_contains(const uint64_t *words) {
    pthread_mutex_lock(&cdepot_shared_cells_lock);
    int found = 0;
    for (cdepot_cell *cell = cdepot_shared_cells; cell != NULL; cell = cell->next) {
        if (cell->words == words) { found = 1; break; }
    }
    pthread_mutex_unlock(&cdepot_shared_cells_lock);
    return found;
}
