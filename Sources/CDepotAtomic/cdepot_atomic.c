// The atomics are in the header (static inline); this file holds the thread-local thread number.
#include "cdepot_atomic.h"

static _Thread_local intptr_t cdepot_thread_number;

intptr_t cdepot_thread_number_get(void) { return cdepot_thread_number; }

void cdepot_thread_number_set(intptr_t value) { cdepot_thread_number = value; }
