// Package deploy holds the tests of the deployment files next to it: the
// Grafana dashboard (grafana/) and the Prometheus alerting rules
// (prometheus/). It is a module of its own so that the Prometheus rule and
// PromQL parsers it tests with stay out of the server's module; the
// server's module has no dependency on it, nor it on the server's.
package deploy
