// libpq, PostgreSQL's C client (pipeline mode needs libpq 14 or later), for DepotPostgres.
#include <libpq-fe.h>
#include <poll.h>

/// A notice receiver that drops the server's notices (libpq prints them on standard error).
static inline void depot_pq_ignore_notice(void *arg, const PGresult *res) { (void)arg; (void)res; }

/// Drops the connection's notices.
static inline void depot_pq_silence(PGconn *conn) { PQsetNoticeReceiver(conn, depot_pq_ignore_notice, 0); }
