"""The HTTP API: thin controllers that read a request, ask a service and answer (`routes` and
one module per group of routes), the command lane that serves the busiest request in front of
Litestar's routing (`command_lane`), the reading of a request (`reading`, `params`, `hooks`),
the one table from errors to answers (`error_table`), the OpenAPI document made as strict as
the server (`openapi`) and the pages of the browser client (`pages`).
"""
