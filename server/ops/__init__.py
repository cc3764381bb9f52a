"""Running the server: whether a process can work now (`readiness`), the gauges only Redis
knows (`gauges`) and the `/metrics` scrape (`scrape`), and where a process's log lines go
(`log_output`).
"""
