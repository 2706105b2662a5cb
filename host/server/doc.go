// Package server is `assay serve`'s HTTP API (docs/serve.md): packs and
// turn uploads under /v1 with per-company bearer tokens, verified on the
// same verify.Run as `assay verify`, errors as RFC 9457 problem+json with
// positioned diagnostics, and /healthz and /readyz.
package server
