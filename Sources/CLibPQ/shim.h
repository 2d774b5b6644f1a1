// libpq, PostgreSQL's C client (pipeline mode needs libpq 14 or later), for DepotPostgres.
#include <libpq-fe.h>
#include <poll.h>
#include <dlfcn.h>
#include <stdint.h>

/// A notice receiver that drops the server's notices (libpq prints them on standard error).
static inline void depot_pq_ignore_notice(void *arg, const PGresult *res) { (void)arg; (void)res; }

/// Drops the connection's notices.
static inline void depot_pq_silence(PGconn *conn) { PQsetNoticeReceiver(conn, depot_pq_ignore_notice, 0); }

/// Asks the OpenSSL that libpq loaded (if any) not to clean itself up when the process exits
/// (`OPENSSL_INIT_NO_ATEXIT`): that cleanup races with threads that end at the same time and
/// can crash the exiting process. Called before libpq opens its first connection; harmless when
/// OpenSSL is absent or already initialized.
static inline void depot_pq_keep_openssl_at_exit(void) {
#ifdef __APPLE__
    void *scope = RTLD_DEFAULT;
#else
    void *scope = (void *)0;  /* glibc's RTLD_DEFAULT */
#endif
    int (*init)(uint64_t, const void *) = (int (*)(uint64_t, const void *))dlsym(scope, "OPENSSL_init_crypto");
    if (init) init(0x00080000ULL /* OPENSSL_INIT_NO_ATEXIT */, 0);
}
