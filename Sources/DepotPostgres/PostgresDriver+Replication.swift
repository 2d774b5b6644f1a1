#if Postgres

extension PostgresDriver {
    /// How far replication is behind, as seen from the server this driver is connected to.
    public struct ReplicationLag: Sendable, Equatable {
        /// Whether that server is a standby (in recovery).
        public var isStandby: Bool
        /// On a standby: how old the last replayed transaction is (nil until one was replayed
        /// since it started). On a primary: the largest `replay_lag` of its attached standbys
        /// (nil when none is attached or none reported yet).
        public var lag: Duration?
        /// On a primary: how many standbys are attached (0 on a standby).
        public var standbys: Int
    }

    /// Replication lag seen from the server this driver reaches (one query, within the call
    /// timeout): for `stat`-style reports and the benchmark. On a standby, the age of the last
    /// replayed transaction (it also grows while the primary is idle); on a primary, the
    /// slowest attached standby's `replay_lag`.
    /// - Throws: ``PostgresDriverError`` when the server cannot be reached in time.
    public func replicationLag() throws -> ReplicationLag {
        let sql = """
            SELECT pg_is_in_recovery()::int::bigint,
                   (CASE WHEN pg_is_in_recovery()
                         THEN extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000000
                         ELSE (SELECT extract(epoch FROM max(replay_lag)) * 1000000 FROM pg_stat_replication) END)::bigint,
                   (CASE WHEN pg_is_in_recovery() THEN 0 ELSE (SELECT count(*) FROM pg_stat_replication) END)::bigint
            """
        let row: [Int64?] = try withSession { session in
            session.leaveChained()
            return try session.wait(session.submit([Statement(sql)]) { rows in
                guard let row = rows.first else { return [] }
                return [try row.integer(at: 0), try row.integer(at: 1), try row.integer(at: 2)]
            })
        }
        guard row.count == 3, let standby = row[0], let standbys = row[2] else {
            throw PostgresDriverError.connectionLost(server: configuration.server, detail: "the replication query returned no row")
        }
        return ReplicationLag(isStandby: standby == 1, lag: row[1].map { .microseconds(max(0, $0)) }, standbys: Int(standbys))
    }
}
#endif
