"""The server: the composition root (`app`, the one place that builds clients and wires the
parts) and its rooms, each one job, arrows pointing down only (an import-linter contract):
`cli` (the `patrician` command) -> `app` -> `config` (settings, Redis clients, card data) ->
`api` (thin controllers, the command lane, the error table, the OpenAPI document, the pages)
and `ops` (readiness, gauges, the metrics scrape, the log output) -> `services` (one per
feature) -> `transport` (HTTP below the routes) -> `schema` (the API's shapes). `web/` holds
the browser client's files. docs/architecture.md is the map.
"""
