// Everything is in the header (static inline): this file only gives the target a source.
#include "cdepot_atomic.h"
