"""HTTP below the routes: what every request passes on its way in and out (`edge`: timing and
the budget of requests in flight; `request_ids`; `security_headers`; `cors`; `rate_limits`),
the answers' compression (`compression`, `packed`), bodies refused unread (`linger`), the ASGI
servers the app runs under (`serving`, `joined_writes`) and what is counted (`metrics`).
"""
