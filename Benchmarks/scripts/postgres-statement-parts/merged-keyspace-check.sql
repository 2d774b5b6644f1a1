\set k random(1, 4000000000000)
\set l1 random(1, 4000000000000)
\set l2 random(1, 4000000000000)
\startpipeline
BEGIN;
SELECT e.value FROM y.epoch e, (SELECT pg_advisory_xact_lock_shared(5314309811289120600::bigint), pg_advisory_xact_lock_shared(98369044::int, 2::int), pg_advisory_xact_lock_shared(98369044::int, 3::int), pg_advisory_xact_lock(:l1::bigint)) l;
WITH k AS (SELECT count(*) AS n FROM y.keyspaces WHERE id IN (2::int, 3::int)), i AS (INSERT INTO y.entries (keyspace, key, value) SELECT 2::int, int8send(:k::bigint), '\x010201000000000000003e398513010a037c046964038c120a67726f757003740e7061796c6f6164076478787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878'::bytea FROM k WHERE k.n = 2 ON CONFLICT (keyspace, key) DO NOTHING RETURNING 1), l1 AS (SELECT pg_advisory_xact_lock_shared(3502521439664740451::bigint), pg_advisory_xact_lock(:l2::bigint)), i1 AS (INSERT INTO y.multi (keyspace, key, value) SELECT 3::int, '\x10'::bytea || int8send(:k::bigint % 100), int8send(:k::bigint) FROM k, l1 WHERE k.n = 2 ON CONFLICT DO NOTHING), c AS (SELECT CASE WHEN (SELECT value FROM y.entries WHERE keyspace = 1::int AND key = '\x736368656d612f76657273696f6e'::bytea) IS NOT DISTINCT FROM '\x0000000000000001'::bytea THEN 1 ELSE 0 END AS ok) SELECT 1 / (k.n - 1), make_date((SELECT count(*) FROM i)::int, 1, 1), 1 / c.ok FROM k, c;
COMMIT;
\endpipeline
