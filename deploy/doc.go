// Package deploy holds the deployment recipes — the container image (../Dockerfile), compose fleets
// (deploy/compose), Kubernetes manifests (deploy/kubernetes), Grafana and Prometheus files (deploy/monitoring) —
// and their tests: every file parses, names only environment variables the binary reads, and wires the roles,
// accounts, probes and metrics the way docs/deployment.md describes. There is no Go code to import here.
package deploy
