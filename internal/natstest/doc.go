// Package natstest starts in-process NATS JetStream servers that ask
// their clients for TLS, a user and password, or a user's credentials
// (operator mode), and writes the files those clients need: the tests'
// secured clusters of the live stream (engine/session/bus,
// cmd/pregao).
//
// It imports the NATS server, its JWT and nkeys packages, testing and
// the standard library, and no package of this module; only tests
// import it.
package natstest
