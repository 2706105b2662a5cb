// Package storetest gives tests a database of each backend to run against:
// a fresh SQLite file, and, when ASSAY_TEST_POSTGRES_URL names a server, a
// uniquely named Postgres schema that is dropped when the test ends.
package storetest
