#ifndef DEPOT_CLMDB_SHIM_H
#define DEPOT_CLMDB_SHIM_H
// Depot uses the system's LMDB (Debian: liblmdb-dev). LMDB's source is never copied here.
#include <lmdb.h>
#endif
