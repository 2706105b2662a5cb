// Package cockpit is assay serve's web cockpit (docs/serve.md): pages
// rendered on the server with html/template from embedded templates, no
// script and nothing loaded from elsewhere, signed in with the API tokens.
// The same templates render `assay report --html`.
package cockpit
