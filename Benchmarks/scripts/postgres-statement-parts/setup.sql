DROP SCHEMA IF EXISTS y CASCADE; CREATE SCHEMA y;
CREATE TABLE y.keyspaces (id serial PRIMARY KEY, name text NOT NULL UNIQUE, multi boolean NOT NULL);
CREATE TABLE y.entries (keyspace integer NOT NULL, key bytea NOT NULL, value bytea NOT NULL, PRIMARY KEY (keyspace, key));
CREATE TABLE y.multi (keyspace integer NOT NULL, key bytea NOT NULL, value bytea NOT NULL, PRIMARY KEY (keyspace, key, value));
CREATE TABLE y.epoch (one boolean PRIMARY KEY DEFAULT true CHECK (one), value bigint NOT NULL);
INSERT INTO y.epoch (value) VALUES (1); INSERT INTO y.keyspaces (name, multi) VALUES ('meta', false), ('docs', false), ('index', true), ('log', false);
INSERT INTO y.entries VALUES (1, '\x736368656d612f76657273696f6e', '\x0000000000000001');
